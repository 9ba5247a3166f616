Blayer2.0.downsample.1.biasJ`|á¼*=Ï<¼uˆ½ÐÍ„;Nq¼p^½~¼2vé;`JË;ÜšË<ª&—¼Fr&<OMi=
Ø'=¸qÔ<˜dÆ¼öH&½\Û<S™*=Ìðw½gg›<¬h
½5Ç<Àæ¿¼