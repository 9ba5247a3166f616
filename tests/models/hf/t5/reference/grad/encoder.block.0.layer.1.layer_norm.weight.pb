 B)encoder.block.0.layer.1.layer_norm.weightJ€ğ]°<t”H¼lún¼X4_<VtºD²¼uk”:ÒŞ
»âê”¼¼,;„¸Õ¹(õ«º²R¼3Ä¿;î“]»{m7¼ÛÑ¼‡ü^¼`~
ºP¾¼'f¬<¼}Š<¢»ƒ¼-ª¼È(ê¼£>“;PG ¹äLFºõÇ“»Ø•¼ıòı»šÎ»