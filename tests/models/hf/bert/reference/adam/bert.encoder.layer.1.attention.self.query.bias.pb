 B.bert.encoder.layer.1.attention.self.query.biasJ€Äî¼"ÜW;ìáºa²u¼½q	½Î«;ú®+==‡<õ¨¼_=uú#¼Ä'´»v}ı<³?/ºù—L<®îò»Q(¼Pÿ—¼¶‘
¼íK<Âèö<â^:d¦i»!`ºJ=u<<L‰‘¼9^-½]*9<ÂHş»	U¼É¸d»