
Bclassifier.3.biasJ(}Х║о▌У╗6*╜ВyЭ╗∙Г<)я╝rвт;0И╝яd■<X4@=