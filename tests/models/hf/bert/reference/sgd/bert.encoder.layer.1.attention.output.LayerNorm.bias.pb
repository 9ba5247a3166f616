 B4bert.encoder.layer.1.attention.output.LayerNorm.biasJ€2×<‘¼¶<Sþ»èÅ­»ÁVøºEMK<s5F¹ƒ¸v<¹ä›¼6á¬<Ô"¼%ä<Mì<OE¾<wlJ¼š†™¼Æoõ»¦6Ã<ø
½Æ<µR½i7¼†ÐÀ¼Öµ=èæ°:ç
½ad<£=6¼#“.¼d8Ð<)O<øZ<