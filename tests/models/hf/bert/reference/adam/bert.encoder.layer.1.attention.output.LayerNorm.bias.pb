 B4bert.encoder.layer.1.attention.output.LayerNorm.biasJ€f‹!<ğK°<À÷â»ö»7“†º¿NZ<P:iCk<FÜ£¼Ì³<kÉ¼õ©é<;Ïä<“1¹<Y¼~óŸ¼cLÛ»'V»<{®½JxÃ< ¹½õqF¼’,È¼\‹=Ä§a:°½„Æ<'p)¼ğG>¼‹ïÔ<Z<
jM<