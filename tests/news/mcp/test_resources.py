"""The product guides as MCP resources, through the official SDK's client over Streamable HTTP:
advertised, listed, read as the same markdown as `/<slug>.md`; an unknown URI is an error; no
prompt capability is advertised, since there are none."""

import httpx
import pytest
from mcp import Client, MCPError

from tests.support.news_factories import GuideFactory

pytestmark = pytest.mark.every_backend


@pytest.fixture
def guides(transactional_db):
    GuideFactory(slug="iphone-18", title="iPhone 18", page_type="generation_hub", body="Om den.")
    GuideFactory(slug="iphone-fold", title="Vikbar iPhone", page_type="rumor", body="Rykten.")
    GuideFactory(slug="utkast", title="Utkast", is_published=False)


def test_the_guides_are_listed_and_read_as_resources(mcp_server, guides):
    async def work(client: Client):
        listed = await client.list_resources()
        read = await client.read_resource("news://guides/iphone-18")
        return client.server_capabilities, listed.resources, read.contents

    capabilities, resources, contents = mcp_server.session(work)

    assert capabilities.resources is not None
    assert capabilities.prompts is None
    assert {(str(r.uri), r.title, r.mime_type) for r in resources} == {
        ("news://guides/iphone-18", "iPhone 18", "text/markdown"),
        ("news://guides/iphone-fold", "Vikbar iPhone", "text/markdown"),
    }
    (content,) = contents
    assert content.mime_type == "text/markdown"
    # The same document the guide's markdown URL serves.
    served = httpx.get(f"{mcp_server.base_url}/iphone-18.md", timeout=10)
    assert content.text == served.text
    assert "# iPhone 18\n\nOm den.\n" in content.text


@pytest.mark.parametrize(
    "uri",
    ["news://guides/utkast", "news://guides/nope", "news://guides/../x", "https://x.example/"],
)
def test_an_unknown_or_unpublished_resource_is_an_error(mcp_server, guides, uri):
    async def work(client: Client):
        with pytest.raises(MCPError) as refused:
            await client.read_resource(uri)
        return refused.value

    error = mcp_server.session(work)
    assert "no resource" in error.error.message
