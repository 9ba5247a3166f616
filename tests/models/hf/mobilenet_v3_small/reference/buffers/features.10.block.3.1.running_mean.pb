B"features.10.block.3.1.running_meanJ@\7÷º“(J¸Û
ºsM­:LþÙ¹k`¾7À‹'¹ó{`:…¦ÑºÚÖºdù»d^À¹ÏªèºP­µ9‚½1»¯i˜: