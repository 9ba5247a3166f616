Blayer1.0.bn3.running_meanJ0íí”»çp=Ø¶
¼¼ÈÖ:Á®ˆ¼‘S=<qcÆ<ÅŸOºZm¤;©W½Zc=