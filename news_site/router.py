"""Which application answers a request of the news service: the MCP tool server answers
`/mcp`, `other` (Django; a 404 in the tool server's own command) every other path. Both
live in one process (the quick start stays one command, `/mcp` on the same base URL), but
neither is the other's fallback: each sees only its own requests.

Lifespan events go to the tool server alone: the SDK's app starts its session manager's task
group there, and Django, run as WSGI, has no lifespan."""

from starlette.types import ASGIApp, Receive, Scope, Send


class PathRouter:
    def __init__(self, *, mcp: ASGIApp, mcp_path: str, other: ASGIApp) -> None:
        self.mcp = mcp
        self.mcp_path = mcp_path
        self.other = other

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan" or (
            scope["type"] == "http" and scope["path"] == self.mcp_path
        ):
            await self.mcp(scope, receive, send)
        else:
            await self.other(scope, receive, send)
