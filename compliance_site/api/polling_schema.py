"""The OpenAPI description of how /changes is polled (shared/conditional.py and
ChangeFeedView): conditional request headers, and the validators, next-page link and poll
interval every answer carries."""

from drf_spectacular.utils import OpenApiParameter

# The ETag is the page's hash, so it changes exactly when the page would.
CHANGES_CONDITIONAL_HEADERS = [
    OpenApiParameter(
        "If-None-Match",
        str,
        OpenApiParameter.HEADER,
        description="The ETag of the same page read before: 304 while the page is unchanged.",
    ),
    OpenApiParameter(
        "If-Modified-Since",
        str,
        OpenApiParameter.HEADER,
        description="An HTTP date; ignored when `If-None-Match` is sent or the date is invalid.",
    ),
    OpenApiParameter(
        "ETag",
        str,
        OpenApiParameter.HEADER,
        required=True,
        description="Strong; changes exactly when the page's body would.",
        response=[200, 304],
    ),
    OpenApiParameter(
        "Last-Modified",
        str,
        OpenApiParameter.HEADER,
        required=True,
        description="When the service first answered this page's current body.",
        response=[200, 304],
    ),
    OpenApiParameter(
        "Cache-Control",
        {"type": "string", "enum": ["private, no-cache"]},
        OpenApiParameter.HEADER,
        required=True,
        description="Revalidate every time (with the ETag).",
        response=[200, 304],
    ),
    OpenApiParameter(
        "Link",
        str,
        OpenApiParameter.HEADER,
        description='`<URL>; rel="next"`: the next page (this query with `cursor` set to '
        "meta.next_cursor); absent on the last page.",
        response=[200],
    ),
    OpenApiParameter(
        "X-Poll-Interval",
        {"type": "integer", "minimum": 1},
        OpenApiParameter.HEADER,
        required=True,
        description="Seconds a poller should wait before reading the first page again once a "
        "pass has reached the last page.",
        response=[200, 304],
    ),
]
