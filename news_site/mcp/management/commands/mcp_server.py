"""`python -m news_site mcp_server [--host H] [--port P]`: the tool server alone, at /mcp.

uvicorn handles SIGTERM and SIGINT itself: it stops accepting, lets requests in flight finish
and runs the tool server's lifespan shutdown.
"""

import uvicorn
from django.core.management.base import BaseCommand, CommandParser
from starlette.responses import PlainTextResponse

from news_site.mcp.asgi import MCP_PATH, mcp_application
from news_site.router import PathRouter

not_found = PlainTextResponse("Not Found", status_code=404)


class Command(BaseCommand):
    help = "Serve the MCP tool server (stateless Streamable HTTP at /mcp) on its own."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)

    def handle(self, *args, host: str, port: int, verbosity: int, **options) -> None:
        log_level = {0: "warning", 1: "info"}.get(verbosity, "debug")
        if verbosity:
            self.stdout.write(f"MCP tool server on http://{host}:{port}/mcp")
        uvicorn.run(
            PathRouter(mcp=mcp_application(), mcp_path=MCP_PATH, other=not_found),
            host=host,
            port=port,
            lifespan="on",
            log_level=log_level,
            # The client address for the rate limit comes from shared.http.client_ip, which
            # trusts TRUSTED_PROXIES only; uvicorn must not rewrite it from headers.
            proxy_headers=False,
        )
