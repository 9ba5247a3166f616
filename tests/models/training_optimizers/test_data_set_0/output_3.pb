B
Xn_adagradJ'00><¾vJ!À