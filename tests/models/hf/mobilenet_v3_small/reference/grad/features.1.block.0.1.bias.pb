Bfeatures.1.block.0.1.biasJ ‚nº0;9T3Ç¹+B
¹Ö ;|Wö8¾¦ˆ9f–9