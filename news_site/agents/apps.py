from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "news_site.agents"
    label = "agents"
