 Btransformer.h.0.mlp.c_proj.biasJ€ »;$gJ=¥p¼vÙ¹=¿û=@Í½ÏÓX=şÍ™=ê¾÷¼dÖ¤»r=8<‘;;v½œáŸ¼~k½.wÖ<’i<lÿ=³BN½#_½¨Í½»î ¾ Zº•
A½Xc½Z—Ö<4¡ô¼È*'½ u#=6ün=İÈş=H0	¾