Blayer3.2.bn2.biasJ0=CÔ¼ÆòÌ»i¯=Wp¿¼ş·,¼A9K<C!
¼ïB<b}<¯Ò¼œ‰c»