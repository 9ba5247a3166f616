 B transformer.h.0.attn.c_proj.biasJ€À(ì:
Q.=š-¼zG¯=\å˜<ˆ…'½‡ˆe=øZ²=Åø¼è¼L=²b§<li½pêÜ».…b½Húå<÷é{<¤Ñ>Vr½dC“½l-¼q€ö½¤pÎ»§‘<½R È¼L¸r<hå¼è×r½[/;=:ïh=û>ôÇ¾