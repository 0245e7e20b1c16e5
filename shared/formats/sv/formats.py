# Admin and HTML pages show times in the display zone (Europe/Stockholm) with its name (CET/CEST),
# so nobody has to guess whether a time is UTC. Short, so list columns stay narrow: ISO dates,
# as Swedish writes them ("2026-11-25 21:10 CET" rather than "25 november 2026 21:10 CET").
DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i T"
