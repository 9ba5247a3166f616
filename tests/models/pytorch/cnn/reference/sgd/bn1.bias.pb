Bbn1.biasJ@wÌ9Ð>¹šµ²8
°R¹Fd@ºrÞ­:Hq¹˜9 ri¹eYF:„ŸŠºzÑ¹>Ì9˜NÄ¹g…ƒ8#We: