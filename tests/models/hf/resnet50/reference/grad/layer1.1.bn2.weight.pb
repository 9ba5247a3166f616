Blayer1.1.bn2.weightJÅD9s9ú:‚Ô
»