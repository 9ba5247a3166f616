
Bclassifier.biasJ(k%·=8—Ê¾fEÃ=¶“»=^ûÙ=¹3Ý=Ô¼Ö=ã­Ì=¡«Õ¾sð=