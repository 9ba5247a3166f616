 B.bert.encoder.layer.0.attention.self.query.biasJ€É;µ¸«S5à™Ñ4žT€5©)Ú4
O­µÿ
6	Vµ~[V4æ)¿50Òvµ~Ê¦´ÔËµ>µÈð5L7·4 –³k.:´5nLF5ùöM4XÙ¶³­Hô´üFë´d¢ð4U5Q¡´&Q4É®f5ÓµlEp5Ó1’3