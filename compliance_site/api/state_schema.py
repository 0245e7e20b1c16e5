"""`GET /api/v1/compliance/schema/state.v1.json`: the JSON Schema every state file's payload is
validated against at reindex, as the file in the repository holds it (docs/compliance-data.md
describes the YAML around it)."""

import hashlib

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import condition, require_safe

from compliance_site.records.documents import SCHEMA_PATH

_BODY = SCHEMA_PATH.read_bytes()
_ETAG = hashlib.sha256(_BODY).hexdigest()[:32]


@require_safe
@condition(etag_func=lambda request: _ETAG)
def state_schema_v1(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(_BODY, content_type="application/schema+json")
    response["Cache-Control"] = "public, max-age=3600"
    return response
