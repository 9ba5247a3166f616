 B$vit.layers.0.layernorm_before.weightJ€/°KºnU}:`œ¹‰Íú9Ò5Î:; 9YJÝ¹?# ¹‰PºkG¹V"ú¹Â3:,,8#Ð:ü;z9Ò]:<Ez¹;œ[ºeÌŠ9ÈHg:·ªb¸+¹5t*9	ŽtºÈ†:ËQ
¹÷ïø¹C'¹?œ:ÔY:YS§ºŽð¹