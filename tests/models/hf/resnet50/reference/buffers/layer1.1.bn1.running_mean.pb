Blayer1.1.bn1.running_meanJ€åÒ½]Œi½m
•½