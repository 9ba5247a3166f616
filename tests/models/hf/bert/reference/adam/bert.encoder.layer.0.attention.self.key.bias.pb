 B,bert.encoder.layer.0.attention.self.key.biasJ€,Å;ÈLæ»™¬ž;¯ÄS<-<Tú—¼‰‚g;i„§<”¼ú£1¼~
/¼#R¼N8:õ$¼^OVºÚ}Ä<70<|ê|»b‰B<Ql<©×%<Ûæø<ôu ¼<—<ßD¼ê¶¼xå¨;zÄl¼Ûs—¼ñ}=‰Ö¥<ÓDí¼