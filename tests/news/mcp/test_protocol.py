"""The tool server's HTTP face: initialize, the twelve tools, methods, hosts, origins and the
rate limit, all over real HTTP against a live uvicorn."""

import asyncio
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from django.conf import settings as django_settings
from mcp import Client, MCPError

from news_site.mcp.asgi import RATE_LIMITED_CODE
from news_site.mcp.server import package_version
from tests.conftest import (
    REPO_ROOT,
    STARTUP_BOUND_SECONDS,
    database_url_for_subprocess,
    free_port,
)

TOOLS = {
    "latest_news",
    "popular_news",
    "search_news",
    "get_entry",
    "list_feeds",
    "list_tags",
    "latest_stories",
    "get_story",
    "list_podd_episodes",
    "get_podd_episode",
    "list_product_guides",
    "get_product_guide",
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
JSON_RPC_HEADERS = {"Accept": "application/json, text/event-stream"}


def post_initialize(url: str, **headers: str) -> httpx.Response:
    return httpx.post(url, json=INITIALIZE, headers={**JSON_RPC_HEADERS, **headers}, timeout=10)


def test_initialize_names_the_server_and_offers_tools(mcp_server):
    async def work(client: Client):
        return client.server_info, client.server_capabilities

    info, capabilities = mcp_server.session(work)
    assert info.name == "news"
    assert capabilities.tools is not None


def test_exactly_the_twelve_tools_are_listed_read_only_with_schemas(mcp_server):
    tools = mcp_server.session(lambda client: client.list_tools()).tools
    assert {tool.name for tool in tools} == TOOLS
    for tool in tools:
        assert len(tool.description) > 30, tool.name
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None, tool.name
        assert tool.annotations.read_only_hint is True
    by_name = {tool.name: tool for tool in tools}
    assert by_name["get_product_guide"].input_schema["required"] == ["slug"]
    page_type = by_name["list_product_guides"].input_schema["properties"]["page_type"]
    assert page_type["anyOf"][0]["enum"] == ["product_hub", "family_hub", "generation_hub", "rumor"]
    limit = by_name["latest_news"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 50, 10)


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_methods_other_than_post_answer_405_allowing_post(mcp_server, method):
    response = httpx.request(method, mcp_server.url, headers=JSON_RPC_HEADERS, timeout=10)
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"


def test_paths_other_than_mcp_are_djangos(mcp_server):
    assert httpx.get(mcp_server.base_url + "/llms.txt", timeout=10).status_code == 200
    assert httpx.get(mcp_server.base_url + "/mcp/", timeout=10).status_code == 404


def test_a_foreign_host_header_is_refused(mcp_server):
    response = post_initialize(mcp_server.url, Host="evil.example")
    assert response.status_code == 421


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", "https://127.0.0.1.evil.example"]
)
def test_a_foreign_origin_is_refused(mcp_server, origin):
    response = post_initialize(mcp_server.url, Origin=origin)
    assert response.status_code == 403


def test_production_host_names_from_allowed_hosts_are_served(mcp_server, settings):
    settings.ALLOWED_HOSTS = ["news.example", ".example.org"]
    for host in ["news.example", "api.example.org"]:
        response = post_initialize(mcp_server.url, Host=host, Origin=f"https://{host}")
        assert response.status_code == 200, host
        assert response.json()["result"]["serverInfo"]["name"] == "news"
    assert post_initialize(mcp_server.url, Host="127.0.0.1").status_code == 421


def call_tool(url: str, name: str = "list_feeds", **headers: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name}}
    return httpx.post(url, json=body, headers={**JSON_RPC_HEADERS, **headers}, timeout=10)


def test_thirty_tool_calls_a_minute_through_the_sdk_client_succeed_and_the_31st_is_429(
    mcp_server, settings
):
    settings.MCP_RATE_LIMIT = "30/m"

    async def thirty_calls(client: Client) -> list[bool]:
        # One session: initialize and its notification, then tool calls, as clients do.
        return [(await client.call_tool("list_feeds", {})).is_error for _ in range(30)]

    assert mcp_server.session(thirty_calls) == [False] * 30
    refused = call_tool(mcp_server.url)
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert refused.headers["Content-Type"] == "application/json"
    assert refused.json()["id"] == 2
    assert refused.json()["error"]["data"]["retry_after"] == int(refused.headers["Retry-After"])
    assert refused.headers["RateLimit-Policy"] == '"mcp";q=30;w=60'
    # The protocol's other requests have their own budget: a new session still starts.
    assert post_initialize(mcp_server.url).status_code == 200


def test_the_sdk_client_sees_the_rate_limit_as_an_error_saying_when_to_retry(mcp_server, settings):
    settings.MCP_RATE_LIMIT = "1/m"

    async def two_calls(client: Client) -> MCPError:
        await client.call_tool("list_feeds", {})
        with pytest.raises(MCPError) as refused:
            await client.call_tool("list_feeds", {})
        return refused.value

    error = mcp_server.session(two_calls)
    assert error.error.code == RATE_LIMITED_CODE
    assert "Rate limit exceeded" in error.error.message
    assert 1 <= error.error.data["retry_after"] <= 60


def test_the_server_names_its_version_and_titles_its_tools(mcp_server):
    async def work(client: Client):
        return client.server_info, (await client.list_tools()).tools

    info, tools = mcp_server.session(work)
    assert info.version == package_version() and info.version not in ("", "0+unknown")
    for tool in tools:
        assert tool.title and tool.title[0].isupper(), tool.name
        # Descriptions read as text, without the source's indentation.
        assert "\n    " not in tool.description, tool.name
        assert tool.input_schema["additionalProperties"] is False


def test_an_unknown_argument_is_refused_by_name(mcp_server):
    result = mcp_server.call("latest_news", {"limt": 5})
    assert result.is_error
    text = result.content[0].text
    assert "Unknown argument(s) for latest_news: limt" in text
    assert "limit" in text


def test_invalid_arguments_are_reported_in_one_readable_line(mcp_server):
    result = mcp_server.call("latest_news", {"limit": 99})
    assert result.is_error
    text = result.content[0].text
    assert (
        text
        == "Invalid arguments for latest_news: limit: Input should be less than or equal to 50."
    )


def test_other_protocol_requests_have_their_own_budget(mcp_server, settings):
    settings.MCP_RATE_LIMIT = "2/m"
    settings.MCP_PROTOCOL_RATE_LIMIT = "5/m"
    answers = [post_initialize(mcp_server.url) for _ in range(5)]
    assert [answer.status_code for answer in answers] == [200] * 5
    assert answers[-1].headers["X-RateLimit-Remaining"] == "0"
    assert answers[-1].headers["RateLimit-Policy"] == '"mcp-protocol";q=5;w=60'

    refused = post_initialize(mcp_server.url)
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert refused.headers["Content-Type"] == "application/json"
    assert refused.json()["id"] == INITIALIZE["id"]
    assert refused.json()["error"]["data"]["retry_after"] == int(refused.headers["Retry-After"])
    # Other methods count there too; tool calls still have theirs.
    assert httpx.get(mcp_server.url, timeout=10).status_code == 429
    assert [call_tool(mcp_server.url).status_code for _ in range(3)] == [200, 200, 429]


def test_the_rate_limit_counts_per_client_ip_behind_a_trusted_proxy(mcp_server, settings):
    settings.MCP_RATE_LIMIT = "1/m"
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    first = call_tool(mcp_server.url, **{"X-Forwarded-For": "203.0.113.1"})
    other = call_tool(mcp_server.url, **{"X-Forwarded-For": "203.0.113.2"})
    again = call_tool(mcp_server.url, **{"X-Forwarded-For": "203.0.113.1"})
    assert [first.status_code, other.status_code, again.status_code] == [200, 200, 429]


@pytest.mark.parametrize("body", [b"[" * 100_000, b'{"method": "tools/call"', b"\xff\x00", b"42"])
def test_bodies_that_are_not_json_rpc_are_refused_by_the_protocol_not_a_crash(mcp_server, body):
    headers = {**JSON_RPC_HEADERS, "Content-Type": "application/json"}
    response = httpx.post(mcp_server.url, content=body, headers=headers, timeout=30)

    assert response.status_code == 400
    assert response.json()["error"]["code"] in (-32700, -32600, -32602)


def test_an_oversized_body_is_413(mcp_server, settings):
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"x" * (3 << 20) + b'"}'
    response = httpx.post(mcp_server.url, content=body, headers=JSON_RPC_HEADERS, timeout=30)

    assert response.status_code == 413
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert response.text == f"the request body is larger than {limit} bytes"


def test_the_mcp_server_command_serves_the_tools(transactional_db, make_feed, make_entry):
    entry = make_entry(make_feed(title="9to5Mac"))
    port = free_port()
    env = {
        **os.environ,
        "NEWS_DATABASE_URL": database_url_for_subprocess(django_settings.DATABASES["default"]),
        "MCP_RATE_LIMIT": "1000/m",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "news_site", "mcp_server", "--port", str(port), "-v", "0"],
        cwd=REPO_ROOT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        # Ready when it answers; the bound only ends a start that hangs (a loaded machine took
        # more than 30 s).
        deadline = time.monotonic() + STARTUP_BOUND_SECONDS
        while True:
            try:
                post_initialize(url)
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)

        async def call():
            async with Client(url) as client:
                return await client.call_tool("get_entry", {"entry_id": entry.pk})

        result = asyncio.run(call())
        assert result.is_error is False
        assert result.structured_content["source"] == "9to5Mac"
        assert httpx.get(f"http://127.0.0.1:{port}/llms.txt", timeout=10).status_code == 404
    finally:
        process.terminate()
        # uvicorn finishes its graceful shutdown, then re-raises the signal it caught.
        assert process.wait(timeout=15) in (0, -signal.SIGTERM)
