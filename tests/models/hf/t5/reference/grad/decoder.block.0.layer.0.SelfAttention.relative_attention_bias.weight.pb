BDdecoder.block.0.layer.0.SelfAttention.relative_attention_bias.weightJ€BGÇ<êA+¼±ë<Ö<Ê »}RŸ»Ü_69{5!¼S“Œ»u&ì»÷j¼ö~O;€X»öæ<Z–}»Ù»M"Ž¼ÈNØ»CÞi¼©Xq»ã¡X:â[¼%t
¼Ñ¾B;.T;ª”<k„‡:†Eª;
­;%æ;á4<i: