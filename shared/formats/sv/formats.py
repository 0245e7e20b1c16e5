# Admin and HTML pages show times in the display zone (Europe/Stockholm) with its name (CET/CEST),
# so nobody has to guess whether a time is UTC. Django's Swedish defaults otherwise.
DATETIME_FORMAT = "j F Y H:i T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i T"
