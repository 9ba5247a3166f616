Blayer1.0.downsample.1.biasJ0Žzì<
<Hbn;˜¤È<š¦Ü¼g:‹<{²»<“¼ùs‚¼ªÂš¼._<Šò><