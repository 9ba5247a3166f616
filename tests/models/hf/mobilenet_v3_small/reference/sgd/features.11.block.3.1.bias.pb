Bfeatures.11.block.3.1.biasJ@<]½Š8·¼nb»¼o"ô¼…g¼ ¿,»yÓ‘»B¼
¼J;ê 0<¯{3<UÉï<ôaÄ¼8YR¼rÆ»Ş»