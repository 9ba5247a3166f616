 B,bert.encoder.layer.0.attention.self.key.biasJ€-Å;ÅLæ»t¬ž;«ÄS</<Qú—¼a‚g;e„§<Š¼
¤1¼~
/¼'#R¼ä8:ö$¼EMVºÐ}Ä<+0<Tê|»^‰B<Pl<«×%<Üæø<æu ¼<—<ßD¼}ê¶¼~å¨;{Äl¼Þs—¼ô}=‹Ö¥<ÒDí¼