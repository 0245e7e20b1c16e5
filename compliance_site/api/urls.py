from django.urls import path

from compliance_site.api import datasets, views, webhook_views
from compliance_site.api.index import IndexView
from compliance_site.api.state_schema import state_schema
from shared.apidocs import api_reference_view

urlpatterns = [
    path("", IndexView.as_view(), name="api-index"),
    path("meta", views.MetaView.as_view()),
    path("states", datasets.StateDatasetView.as_view()),
    path("states/<str:abbr>", views.StateView.as_view()),
    path("states/<str:abbr>/versions", views.StateVersionListView.as_view()),
    path("states/<str:abbr>/versions/<str:number>", views.StateVersionView.as_view()),
    path("esa_programs", views.EsaProgramListView.as_view()),
    path("esa_programs/<str:abbr>", views.EsaProgramView.as_view()),
    path("changes", views.ChangeFeedView.as_view()),
    path("review_flags", views.ReviewFlagsView.as_view()),
    path("citations/<str:abbr>", views.CitationView.as_view()),
    # Webhooks of the calling key (docs/compliance-integrators.md, "Webhooks").
    path("webhooks", webhook_views.WebhookListView.as_view()),
    path("webhooks/<int:webhook_id>", webhook_views.WebhookView.as_view()),
    path(
        "webhooks/<int:webhook_id>/rotate_secret", webhook_views.WebhookRotateSecretView.as_view()
    ),
    path("webhooks/<int:webhook_id>/deliveries", webhook_views.DeliveryListView.as_view()),
    path("deliveries/<int:delivery_id>/redeliver", webhook_views.DeliveryRedeliverView.as_view()),
    # The browsable reference and the state payload's JSON Schema (docs/compliance-data.md).
    path("docs", api_reference_view(schema_url_name="schema", title="Compliance Data Service")),
    path("schema/state.v1.json", state_schema, name="state-schema-v1"),
    path("schemas/state.v<int:major>.json", state_schema, name="state-schema"),
]
