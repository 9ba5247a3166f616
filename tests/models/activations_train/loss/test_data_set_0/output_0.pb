BlossJ
60A