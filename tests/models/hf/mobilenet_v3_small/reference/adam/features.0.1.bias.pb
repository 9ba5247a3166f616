Bfeatures.0.1.biasJ tà»
³¼½ÙÏ<Pœd<†#Ñ¼³.Ã¼ŸpŠºõÌ£¼