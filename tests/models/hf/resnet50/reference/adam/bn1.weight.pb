B
bn1.weightJ›!Å?oô~?±~?