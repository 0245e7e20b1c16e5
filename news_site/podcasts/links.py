"""Old episode links: before episodes had path-safe ids, a path named the feed's GUID. Such a
path answers a permanent redirect to the episode's path on the same surface, so a saved link or
id keeps working (docs/decisions.md)."""

from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.urls import reverse

from news_site.podcasts.selectors import episode_get_by_guid


def episode_moved(
    request: HttpRequest, *, old_id: str, route: str
) -> HttpResponsePermanentRedirect | None:
    """The redirect from `old_id`, a GUID, to the `route` of its episode; None when no episode
    has that GUID. The query string goes along (`include_transcript=true` still applies)."""
    episode = episode_get_by_guid(guid=old_id)
    if episode is None:
        return None
    location = reverse(route, kwargs={"episode_id": episode.episode_id})
    query = request.META.get("QUERY_STRING", "")
    return HttpResponsePermanentRedirect(f"{location}?{query}" if query else location)
