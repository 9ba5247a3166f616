 B6bert.encoder.layer.0.attention.output.LayerNorm.weightJ€Â&»ØÃ9»z:Û«Öºµfa9Ùž“9ž,:îã;¼iû¸ÇÕÄ9™¯8ÉÙº€y‰ºAøê6_â‘º‰.º¶
;÷h€¸Ø½Œ»eºuõ+»ÑIº-48B»X¸>,f;3ù3:võºøŸv;ë›»¸ºöºâÈË;,»p9