"""The compliance service's pages for people: `/`, which says what the service is and where its
references are, and the integrators' docs from docs/ as HTML (when the service runs from a
checkout that has them; an installed package without docs/ lists only the references)."""

from pathlib import Path

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_safe

from shared.markdown_html import markdown_html

# The docs an integrator reads, by the name in their URL (`/docs/<name>`): the guide first.
DOCS = {
    "compliance-integrators": "The integrators' guide: keys, limits, every answer, the change feed",
    "compliance-data": "The data: the state files, their JSON Schema, how they are published",
    "compliance-data-faults": "What happens to faulty data files",
    "auth-and-limits": "Keys, tokens and rate limits in depth",
}
# docs/ of the checkout the service runs from.
DOCS_DIR = Path(__file__).resolve().parents[2] / "docs"
# The pages change only with a deployment.
CACHE_SECONDS = 300
# The pages' one inline style block; everything else stays as the API's policy forbids
# (django-csp's csp_update, set on the response).
_STYLE = {"style-src": ["'unsafe-inline'"]}


def _doc_path(name: str) -> Path:
    return DOCS_DIR / f"{name}.md"


def _served(name: str) -> bool:
    return name in DOCS and _doc_path(name).is_file()


def _doc_link(target: str) -> str:
    """A link between docs: to the served page, or none for a doc this service does not serve."""
    name, _, fragment = target.partition("#")
    name = name.removeprefix("./").removesuffix(".md")
    if not _served(name):
        return ""
    return f"/docs/{name}" + (f"#{fragment}" if fragment else "")


def _page(request: HttpRequest, template: str, context: dict[str, object]) -> HttpResponse:
    response = render(request, template, context)
    patch_cache_control(response, public=True, max_age=CACHE_SECONDS)
    response._csp_update = _STYLE  # type: ignore[attr-defined]
    return response


@require_safe
def landing(request: HttpRequest) -> HttpResponse:
    docs = [(name, title) for name, title in DOCS.items() if _served(name)]
    return _page(request, "landing/index.html", {"docs": docs})


@require_safe
def doc(request: HttpRequest, name: str) -> HttpResponse:
    if not _served(name):
        raise Http404("no such document")
    text = _doc_path(name).read_text(encoding="utf-8")
    body = markdown_html(text, local_link=_doc_link)
    return _page(request, "landing/doc.html", {"title": DOCS[name], "body": body})
