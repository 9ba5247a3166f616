Blayer3.3.bn1.running_meanJ0ßz¾‚µð¾uØ½eD`=U£‡¾4
C=Ì9=jhI¾­ã=
ª
¾`j²¾j¥ä=