 B4bert.encoder.layer.1.attention.output.LayerNorm.biasJ€:3»ì(;@qØºÂ=º\­ºF|\º2#»vE;ñÎ9eõËºÉ9Å¹BÕU»
`:ğ0y;ŒËG:àS;˜—»É9™»ZîÉ;"[Ÿºáqp:y-…:ĞÎ;]~§;6G: »@»¨ÀØ9Ô‹»vÌG»–Uâ: