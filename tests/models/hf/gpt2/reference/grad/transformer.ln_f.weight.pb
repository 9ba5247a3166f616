 Btransformer.ln_f.weightJ€Â&»#d\;—Qkºá$¼ëqÀ:C;qóÄ;5
º­I;Xš&»;m;ª
oºXYº[4T:+pI»)Lx:«(;‰$»±;«+~:='C;OÏÍ:Q’­¹K39;Í¸Ç9át`¹öp;|+;ÁÂÒ:–¸.¹âÜ@;fHÖ»