Bfeatures.11.block.3.1.biasJ@ó]½ğ0·¼«a»¼…(ô¼…g¼¹,»yÓ‘»2¼TÎJ;*0<Œr3<aÌï<
hÄ¼èfR¼M~Æ»!»