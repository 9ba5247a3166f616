Blayer2.0.bn2.biasJôêZ<Û
<§Â<ÚÆ¼/¨¼á~b¼