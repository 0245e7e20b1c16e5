"""Every page of the news admin an editor opens, and what the browser tests check on each: that
it fits a 1280 px screen and that its visible text is Swedish."""

import re
from urllib.parse import urljoin, urlsplit

# Common English words of Django's own admin and of English help texts; none is a Swedish
# word, so any of them in the visible text is an untranslated string.
ENGLISH_WORDS = frozenset(
    [
        "about",
        "add",
        "after",
        "all",
        "and",
        "any",
        "are",
        "backend",
        "by",
        "can",
        "change",
        "choose",
        "clear",
        "content",
        "database",
        "date",
        "day",
        "days",
        "delete",
        "edit",
        "enter",
        "first",
        "for",
        "from",
        "group",
        "have",
        "history",
        "home",
        "into",
        "is",
        "it",
        "last",
        "log",
        "more",
        "name",
        "next",
        "none",
        "not",
        "now",
        "of",
        "on",
        "or",
        "password",
        "past",
        "please",
        "priority",
        "queue",
        "remove",
        "required",
        "result",
        "results",
        "run",
        "save",
        "search",
        "select",
        "show",
        "task",
        "tasks",
        "that",
        "the",
        "this",
        "time",
        "to",
        "today",
        "user",
        "username",
        "view",
        "was",
        "when",
        "which",
        "will",
        "with",
        "without",
        "yes",
        "you",
        "your",
    ]
)

# The parts of a page that show the editors' data (article titles and summaries from English
# sources, feed and tag names, Django's stored permission names), not the admin's own words.
DATA_REGIONS = ", ".join(
    (
        "#result_list tbody",  # the rows of a list
        "#changelist-filter li",  # a filter's values: feeds, tags, and the forms' choice labels
        ".readonly",  # stored values shown read-only
        ".related-widget-wrapper select",  # the rows a relation can point at
        ".selector",  # the two-box picker of permissions and groups
        ".inline-group tbody p",  # a story's articles
        ".date-hierarchy",  # dates of the stored rows
        "#content > h2",  # the name of the row a change form edits
        # A fetch error as the source's server or the feed parser gave it (not translated).
        "#content-main td.last-error",
    )
)


def admin_page_paths(page, base: str) -> list[str]:
    """The index, every list, an add form and a change form of each model, and the pages the
    news admin adds (health, OPML import, review queue's filters)."""
    page.goto(f"{base}/admin/")
    found = page.eval_on_selector_all(
        "#content-main a[href^='/admin/']", "links => links.map(a => a.getAttribute('href'))"
    )
    paths = ["/admin/", *dict.fromkeys(found)]
    for listing in [p for p in paths if re.fullmatch(r"/admin/\w+/\w+/", p)]:
        page.goto(f"{base}{listing}")
        first = page.locator("#result_list tbody a[href*='/change/']").first
        if first.count():
            paths.append(urlsplit(urljoin(page.url, first.get_attribute("href") or "")).path)
    return [
        *paths,
        "/admin/news/feed/health/",
        "/admin/news/feed/import-opml/",
        "/admin/news/summaryreview/?visa=granskade",
        "/admin/news/summaryreview/?visa=offline",
    ]


def visible_ui_text(page) -> str:
    """The page's visible text without the regions that show stored data."""
    return page.evaluate(
        """(selector) => {
            const copy = document.body.cloneNode(true);
            copy.querySelectorAll(selector).forEach(e => e.remove());
            copy.querySelectorAll('script, style, template').forEach(e => e.remove());
            // The breadcrumbs end with the name of the row the page is about.
            copy.querySelector('.breadcrumbs')?.lastChild?.remove();
            // innerText needs a rendered element: measure the copy in place of the original.
            const holder = document.createElement('div');
            holder.append(...copy.childNodes);
            document.body.append(holder);
            const text = holder.innerText;
            holder.remove();
            return text;
        }""",
        DATA_REGIONS,
    )


def english_words(text: str) -> set[str]:
    """The English words of `text`. Addresses are set aside (9to5mac is no "to"), and a
    hyphenated word is one word (Django's Swedish "backend-lösningar", "Single Sign-On")."""
    without_addresses = re.sub(r"https?://\S+", " ", text)
    words = re.findall(r"[^\W\d_]+(?:-[^\W\d_]+)*", without_addresses)
    return {word for word in words if word.lower() in ENGLISH_WORDS}


def overflow(page) -> dict[str, int]:
    """How wide the page and the list's scrolling box are, against what the screen shows."""
    return page.evaluate(
        """() => {
            const results = document.querySelector('#changelist .results');
            return {
                page: document.documentElement.scrollWidth,
                list: results ? results.scrollWidth - results.clientWidth : 0,
            };
        }"""
    )
