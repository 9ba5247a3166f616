Blayer3.3.bn2.biasJ0À¡¹VÂXº‘»ˆ:¶ 
»A;]mºØvD¹ZlÈ9˜JúºúJ ºœ!ºIº