"""`GET /api/v1/compliance/schemas/state.v<major>.json`: the JSON Schemas state files' payloads
are validated against at reindex, one per major, as the files in the repository hold them
(docs/compliance-data.md describes the YAML around them and how a major is bumped)."""

import hashlib

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import condition, require_safe

from compliance_site.records.documents import schema_path, schema_versions

_BODIES = {major: schema_path(major).read_bytes() for major in schema_versions()}
_ETAGS = {major: hashlib.sha256(body).hexdigest()[:32] for major, body in _BODIES.items()}


def _etag(request: HttpRequest, major: int = 1) -> str | None:
    return _ETAGS.get(str(major))


@require_safe
@condition(etag_func=_etag)
def state_schema(request: HttpRequest, major: int = 1) -> HttpResponse:
    body = _BODIES.get(str(major))
    if body is None:
        raise Http404(f"no state schema of major version {major}")
    response = HttpResponse(body, content_type="application/schema+json")
    response["Cache-Control"] = "public, max-age=3600"
    return response
