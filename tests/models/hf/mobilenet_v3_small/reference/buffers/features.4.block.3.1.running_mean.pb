B!features.4.block.3.1.running_meanJ@2Pà:l,;Ü»¬:}÷ºqĞ„¸‡hKº9ş¢ºGöİ9¢‡;pt~º°¾N:¢@ÿ:Ò¨ã9–¹ ;
C•ºšE: