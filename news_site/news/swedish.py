"""Swedish relative time as people write it: "för 2 timmar sedan", "i går".

Django's humanize says "2 timmar sedan" (no "för") and never "i går", so we write our own.
Calendar words (i går) follow the Stockholm calendar, not UTC.
"""

from datetime import datetime
from zoneinfo import ZoneInfo

STOCKHOLM = ZoneInfo("Europe/Stockholm")

_MONTHS = (
    "januari",
    "februari",
    "mars",
    "april",
    "maj",
    "juni",
    "juli",
    "augusti",
    "september",
    "oktober",
    "november",
    "december",
)


def _ago(count: int, one: str, singular: str, plural: str) -> str:
    return f"för {one} {singular} sedan" if count == 1 else f"för {count} {plural} sedan"


# Beyond this, a count of years says nothing a reader can use ("för 1928 år sedan" for a
# feed's year-0001 placeholder): the date itself is shown.
_RELATIVE_MAX_DAYS = 10 * 365


def relative_time(moment: datetime, *, now: datetime) -> str:
    seconds = (now - moment).total_seconds()
    if seconds > _RELATIVE_MAX_DAYS * 86400:
        return long_date(moment)
    if seconds < 60:
        # Also clock skew and future-dated items: they are news right now.
        return "just nu"
    minutes = int(seconds // 60)
    if minutes < 60:
        return _ago(minutes, "en", "minut", "minuter")
    hours = minutes // 60
    days_apart = (now.astimezone(STOCKHOLM).date() - moment.astimezone(STOCKHOLM).date()).days
    # Shortly after midnight, something from late last night is still "för 3 timmar sedan".
    if days_apart == 0 or hours < 6:
        return _ago(hours, "en", "timme", "timmar")
    if days_apart == 1:
        return "i går"
    if days_apart == 2:
        return "i förrgår"
    if days_apart < 7:
        return f"för {days_apart} dagar sedan"
    if days_apart < 31:
        return _ago(days_apart // 7, "en", "vecka", "veckor")
    if days_apart < 365:
        return _ago(days_apart // 30, "en", "månad", "månader")
    return _ago(days_apart // 365, "ett", "år", "år")


def long_date(moment: datetime) -> str:
    """ "3 mars 2025" in Stockholm time."""
    try:
        local = moment.astimezone(STOCKHOLM)
    except (OverflowError, ValueError):
        # Year 1 or 9999 in UTC leaves the calendar in Stockholm time.
        local = moment
    return f"{local.day} {_MONTHS[local.month - 1]} {local.year}"
