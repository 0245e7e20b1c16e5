"""GET /api/v1/compliance/schema: the OpenAPI document in YAML (default) or JSON
(`?format=json`), and its errors in the API's JSON envelope whatever format was asked for (an
unknown format is a 400, an unsafe method a 405 with `Allow`)."""

from typing import Any

from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from compliance_site.api.errors import InvalidParameter

FORMATS = ("yaml", "json")


@extend_schema(exclude=True)
class SchemaView(SpectacularAPIView):
    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        # Before content negotiation, which answers an unknown format with a bare 404.
        requested = request.query_params.getlist("format")
        if any(value not in FORMATS for value in requested):
            raise InvalidParameter(f"format: one of {', '.join(FORMATS)}")
        super().initial(request, *args, **kwargs)

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        if response.status_code >= 400:
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)
