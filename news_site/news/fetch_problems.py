"""What a source's last error means, in the editors' language.

The fetcher stores its errors as technical text, a code or kind and then the detail
(`blocked_address: 10.0.0.5 is private`, `HTTP 503`, `not a feed: Content-Type text/html`): the
log and the operators read them so. The admin shows each with a sentence that says what went
wrong and what to do, the stored text kept beside it for whoever looks further.
"""

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

# By the start of the stored text: shared/fetch_errors.py's codes, then news.feeds' own kinds.
EXPLANATIONS: dict[str, Promise] = {
    "blocked_address": _(
        "The address leads to a local or private network, which the service does not fetch "
        "from; the operator can allow it with the FETCH_ALLOW_PRIVATE_NETWORKS setting."
    ),
    "timeout": _("The source did not answer in time; it is tried again later."),
    "too_large": _("The feed is larger than the service reads."),
    "tls_error": _("The source's secure connection (TLS) failed."),
    "connection_error": _("The source could not be reached; it is tried again later."),
    "too_many_redirects": _("The address redirects too many times."),
    "invalid_url": _("The address is not a complete http(s) address."),
    "HTTP ": _("The source answered with an error."),
    "not a feed": _("The address answers with a web page, not a feed: paste the feed's address."),
    "storing failed": _("The feed was read, but storing its entries failed."),
    "skipped": _("Some items of the feed were skipped; the rest were stored."),
}


def fetch_problem_shown(error: str) -> str:
    """A stored fetch error as the admin shows it: the editors' sentence, then the stored text
    in brackets; a text it does not know (a parser's message) as stored."""
    for start, explanation in EXPLANATIONS.items():
        if error.startswith(start):
            return f"{explanation} ({error})"
    return error
