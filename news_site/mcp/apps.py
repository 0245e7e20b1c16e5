from django.apps import AppConfig


class McpConfig(AppConfig):
    name = "news_site.mcp"
    # "mcp" is also the SDK's package name; a distinct label keeps the two apart in logs.
    label = "news_mcp"
    verbose_name = "MCP tool server"
