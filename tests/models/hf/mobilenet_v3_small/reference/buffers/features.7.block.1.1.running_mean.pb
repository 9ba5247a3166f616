 B!features.7.block.1.1.running_meanJ€œÀ¹+RÄ¸{cz¹¹ÍÚ
9qJ“¹4Ä›¹EæI9Ó…¹ª™û¸-Q?9ÙÍ¸ =B7GNÏ¸ESÕ8”²»¸©I8Àš{¹›hˆ8»‘Ñ7ìN„¹æ¾¹=½E¹4[@¹à#T9åf¹Ğ ›9¢y)9m9¹nÄÌ8ã:lN9