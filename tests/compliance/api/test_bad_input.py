"""Whatever a client sends, the API answers with a status it documents, never a 500."""

from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.compliance.builders import ESA, state_payload

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

anything = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=80
)


@pytest.fixture
def published(data_repo, run_reindex):
    data_repo.write("TX", state_payload("TX", esa_program=ESA))
    data_repo.commit("Seed")
    run_reindex()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    segment=anything,
    version=anything,
    as_of=anything,
    since=anything,
    limit=anything,
    cursor=anything,
    resource_type=anything,
)
def test_arbitrary_parameters_never_cause_a_server_error(
    api, published, segment, version, as_of, since, limit, cursor, resource_type
):
    segment = quote(segment, safe="")
    requests = [
        ("/states/TX", {"version": version}),
        ("/states/TX", {"as_of": as_of}),
        ("/changes", {"since": since, "limit": limit, "resource_type": resource_type}),
        ("/changes", {"cursor": cursor}),
        (f"/states/{segment}", {}),
        (f"/states/TX/versions/{segment}", {}),
        (f"/esa_programs/{segment}", {}),
        (f"/citations/{segment}", {}),
    ]
    for path, params in requests:
        response = api.get(path, params=params)
        assert response.status_code in {200, 400, 404}, (path, params, response.text)
        assert "error" in response.json() or response.status_code == 200


def test_every_endpoint_costs_a_fixed_number_of_queries(api, anonymous, published, served_queries):
    # Key lookup, then the endpoint's own reads; none grows with the data.
    budgets = {
        "/meta": 4,
        "/states/TX": 3,
        "/states/TX/versions": 3,
        "/states/TX/versions/1": 3,
        "/esa_programs": 3,
        "/esa_programs/TX": 4,
        "/changes": 3,
        "/citations/TX": 4,
    }
    for path, budget in budgets.items():
        with served_queries.at_most(budget):
            assert api.get(path).status_code == 200, path
    with served_queries.at_most(4):
        assert anonymous.get("/review_flags").status_code == 200
