B
bn1.weightJeç4Ω-`Ï<ÎÜ<