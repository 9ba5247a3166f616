Blayer2.1.bn1.running_meanJÛŽ¼5¿×=¿Ô=cHµ½X
6¾UÊw½