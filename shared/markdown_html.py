"""Markdown as HTML for a page: guides written by editors (news) and the integrators' docs
(compliance).

Only markdown's own markup reaches the browser: raw HTML in the text is shown as text, and a
link or image goes to an http(s) address, a fragment, or a path on this site that the caller
accepts; any other target (`javascript:`, `data:`, a path the site does not serve) leaves the
text without its link.
"""

import xml.etree.ElementTree as ET
from collections.abc import Callable
from urllib.parse import urlsplit

import markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

# A relative target, to the path this site serves it at ("" when it serves none).
LocalLink = Callable[[str], str]


def site_paths(target: str) -> str:
    """The default for relative targets: absolute paths on this site, as they are."""
    return target if target.startswith("/") else ""


def _safe_target(target: str, local_link: LocalLink) -> str:
    target = target.strip()
    if target.startswith("#"):
        return target
    parts = urlsplit(target)
    if parts.scheme or target.startswith("//"):
        return target if parts.scheme in ("http", "https") and parts.hostname else ""
    return local_link(target)


# The markdown package has no type hints.
class _SafeTargets(Treeprocessor):  # type: ignore[misc]
    def __init__(self, md: markdown.Markdown, local_link: LocalLink) -> None:
        super().__init__(md)
        self.local_link = local_link

    def run(self, root: ET.Element) -> None:
        for element in root.iter():
            for attribute in ("href", "src"):
                if attribute in element.attrib:
                    target = _safe_target(element.attrib[attribute], self.local_link)
                    if target:
                        element.set(attribute, target)
                    else:
                        del element.attrib[attribute]


class _Safe(Extension):  # type: ignore[misc]
    def __init__(self, local_link: LocalLink) -> None:
        super().__init__()
        self.local_link = local_link

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_SafeTargets(md, self.local_link), "safe_targets", 0)


def markdown_html(text: str, *, local_link: LocalLink = site_paths) -> str:
    """The text as HTML (tables and fenced code included); raw HTML in it arrives escaped."""
    return str(
        markdown.markdown(
            text, extensions=["tables", "fenced_code", _Safe(local_link)], output_format="html"
        )
    )
