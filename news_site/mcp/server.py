"""The tool server itself: the SDK's MCPServer, held to what the protocol asks of a server that
advertises input schemas.

- A call with an argument its tool does not take is refused with a message naming it (the SDK
  would drop it silently: a misspelt `limt=5` answered with the default 10), and every input
  schema says so (`additionalProperties: false`).
- Arguments that fail validation are reported as one readable line per field, not pydantic's
  multi-line text with its documentation links.
- `serverInfo.version` is the installed package's version.
- Only capabilities with something behind them are advertised: no prompts (the SDK serves
  prompts/list whether or not there are any, and a client would offer an empty menu).
"""

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult
from mcp_types import Tool as MCPTool
from pydantic import ValidationError

PACKAGE = "platform-services"


def package_version() -> str:
    try:
        return version(PACKAGE)
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def _validation_message(tool: str, error: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(str(part) for part in problem['loc']) or 'arguments'}: {problem['msg']}"
        for problem in error.errors(include_url=False)
    )
    return f"Invalid arguments for {tool}: {problems}."


class ToolServer(MCPServer):
    _parameters: dict[str, set[str]] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The capabilities are derived from the methods served (Server.get_capabilities).
        for method in ("prompts/list", "prompts/get"):
            self._lowlevel_server._request_handlers.pop(method, None)

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        return [
            tool.model_copy(
                update={"input_schema": {**tool.input_schema, "additionalProperties": False}}
            )
            for tool in tools
        ]

    async def _tool_parameters(self) -> dict[str, set[str]]:
        if self._parameters is None:
            self._parameters = {
                tool.name: set(tool.input_schema.get("properties", {}))
                for tool in await super().list_tools()
            }
        return self._parameters

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        accepted = (await self._tool_parameters()).get(name)
        if accepted is not None:
            unknown = sorted(set(arguments) - accepted)
            if unknown:
                takes = ", ".join(sorted(accepted)) or "no arguments"
                raise ToolError(
                    f"Unknown argument(s) for {name}: {', '.join(unknown)} ({name} takes {takes})."
                )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_validation_message(name, exc.__cause__)) from exc.__cause__
            raise
