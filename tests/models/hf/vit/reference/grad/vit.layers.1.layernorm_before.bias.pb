 B"vit.layers.1.layernorm_before.biasJ€ÝiN;š¬9Ä-ƒ:‚@1;µ$9ž©;D(S»‘ ^»4Údº8w/;!ÅÓº<ÒY¸²èÁ9ƒ_€;¹Ä,;çRd»]×F;e˜¡ºÆaÃ:ì6â:<…Uº›Å;¢uQ8Åm»Ÿ!4»ûú;‰öº.D=;‹HË¹æÎ¾:kE£;Ç
Äº