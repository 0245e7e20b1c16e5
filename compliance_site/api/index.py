"""GET /api/v1/compliance/: what the API offers, as links, in the API's own format (JSON), for
an integrator who starts at the prefix instead of a 404. No key needed (the links say which
reads want one: all but review_flags)."""

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from compliance_site.api import schema
from compliance_site.api.serializers import API_VERSION

PREFIX = "/api/v1/compliance"
# (rel, path, title): the reference first, then the reads.
LINKS = (
    ("docs", "/docs", "The API reference (Swagger UI)."),
    ("schema", "/schema", "The OpenAPI document (YAML; ?format=json for JSON)."),
    ("meta", "/meta", "The dataset: jurisdictions, schema version, last publication."),
    ("states", "/states", "Every state's current record (JSON or NDJSON)."),
    ("state", "/states/TX", "One state's current record."),
    ("changes", "/changes", "The change feed, oldest first, with a sync_token."),
    ("esa_programs", "/esa_programs", "Education savings account programs."),
    ("review_flags", "/review_flags", "Records due for review (no key needed)."),
    ("webhooks", "/webhooks", "The calling key's webhooks."),
    ("state_schema", "/schemas/state.v2.json", "The JSON Schema of state payloads."),
)


class _Link(serializers.Serializer[Any]):
    rel = serializers.CharField()
    href = serializers.URLField()
    title = serializers.CharField()


class _Index(serializers.Serializer[Any]):
    name = serializers.CharField()
    api_version = serializers.CharField()
    links = _Link(many=True)


class IndexView(APIView):
    @extend_schema(
        operation_id="api_index",
        summary="What the API offers",
        description="Links to the reference and every read. No key needed.",
        auth=schema.KEY_OPTIONAL,
        responses=inline_serializer(
            "ApiIndexEnvelope",
            {
                "data": _Index(),
                "meta": inline_serializer("ApiIndexMeta", {"api_version": serializers.CharField()}),
            },
        ),
    )
    def get(self, request: Request) -> Response:
        links = [
            {"rel": rel, "href": request.build_absolute_uri(PREFIX + path), "title": title}
            for rel, path, title in LINKS
        ]
        data = {"name": "Compliance Data Service", "api_version": API_VERSION, "links": links}
        return Response({"data": data, "meta": {"api_version": API_VERSION}})
