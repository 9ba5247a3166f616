B
Hn_adagradJ-Éè?¡èõ>_}|?