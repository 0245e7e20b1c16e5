# Admin and HTML pages show times in the display zone with its name (CET/CEST); see ../sv.
DATETIME_FORMAT = "N j, Y, H:i T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i T"
