Bfeatures.4.block.3.1.weightJ@\º[D<9‡F-¹dê·â„#·] I·…ÒÚ¸5iT¸
G0¹şAA¹0Êu¸+½ù9z‘83İí¹W¬w9:jŞ9