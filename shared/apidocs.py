"""The browsable API reference both services serve: Swagger UI from drf-spectacular with its
assets from the sidecar package under /static/ (no CDN), over the service's own OpenAPI schema.

The split view delivers its start-up script as a file, so the page needs no inline script; its
policy allows the service's own scripts, styles (plus the template's one inline style block),
images and the schema fetch, nothing from elsewhere.
"""

from collections.abc import Callable
from typing import Any

from csp.constants import NONE, SELF, UNSAFE_INLINE
from csp.decorators import csp_replace
from drf_spectacular.views import SpectacularSwaggerSplitView

REFERENCE_CSP = {
    "default-src": [SELF],
    "script-src": [SELF],
    "style-src": [SELF, UNSAFE_INLINE],
    "img-src": [SELF, "data:"],
    "connect-src": [SELF],
    "form-action": [SELF],
    "object-src": [NONE],
}


def api_reference_view(*, schema_url_name: str, title: str) -> Callable[..., Any]:
    view = SpectacularSwaggerSplitView.as_view(url_name=schema_url_name, title=title)
    return csp_replace(REFERENCE_CSP)(view)
