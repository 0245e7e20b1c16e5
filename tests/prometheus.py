"""Reading what /metrics answers, for tests of both services."""

import httpx
from prometheus_client.parser import text_string_to_metric_families


def scrape(source: str | httpx.Client) -> str:
    """/metrics of a server (its base URL) or of the application in-process (its client)."""
    if isinstance(source, httpx.Client):
        response = source.get("/metrics")
    else:
        response = httpx.get(f"{source}/metrics", timeout=30)
    assert response.status_code == 200, response.text
    return response.text


def sample(text: str, name: str, **labels: str) -> float:
    """The value of the series `name` with exactly `labels`; 0 when there is none (yet)."""
    for family in text_string_to_metric_families(text):
        for series in family.samples:
            if series.name == name and series.labels == labels:
                return series.value
    return 0.0
