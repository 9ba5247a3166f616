 B)decoder.block.1.layer.1.layer_norm.weightJ€øÀ„8“,»K/€»fo/: ¡Çº
ê“»·]»ÔLè»–?<FA;í˜ê:ÂÞ%<˜Á:hLƒ»HD;ö¼ÕZ»žlS»8»êæ;€3:ö“‡»iT¼ÒµO;¸^‹;šÛ »çÓÍ:¾”‹:Z0AºÐK»EÔ«»ÒoÉ;