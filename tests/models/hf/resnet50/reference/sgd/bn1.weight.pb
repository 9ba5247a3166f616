B
bn1.weightJ‰‘?Ş~?Kñ}?