Bfeatures.6.block.2.fc1.biasJ@™ìT¼s´Ã¼rÉ»A³Ò;¯#/;ÓtV;¶½·ˆŸ<‘±¼Ûü¥;ff¹¼ôŠÄº¯-
¼àb<:x"<|Ü<