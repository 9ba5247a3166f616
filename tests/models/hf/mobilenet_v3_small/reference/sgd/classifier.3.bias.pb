
Bclassifier.3.biasJ(&ºst\ºùeMΩR=»¡Â∏UΩ+kªﬂ¥–ºuÓ±<Ø=