Blayer2.1.bn2.weightJ6Íñ∫Ó€ï:–ì~:ö€πâk∫-
≤9