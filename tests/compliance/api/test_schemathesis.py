"""schemathesis over the compliance API's OpenAPI schema (/api/v1/compliance/schema), with a valid
API key on every request and every check schemathesis has: no 5xx; statuses, content types,
headers and bodies as documented; data the schema allows is accepted and data it forbids
rejected; the key enforced where the schema requires one; 405 with `Allow` for undeclared
methods; and the rest; and every answer validated strictly by openapi-core
(tests/support/openapi_strict.py: undeclared fields and statuses refused). Its examples,
coverage and fuzzing phases run in both generation modes (positive and negative).

It runs schemathesis' own engine, the one its CLI (`st run`) drives, in the test's process: its
pytest integration (`schemathesis.pytest.from_fixture`) does not work with pytest 9, and the engine
runs the coverage phase (undeclared methods, missing and boundary values), which plain
`as_strategy()` does not. The requests go to the application through WSGI
(tests/support/inprocess.py), inside the test's transaction: no server, no flush of the database.
The limits are lifted so that a 429 hides nothing (they are tested in tests/compliance/access).
"""

from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
import schemathesis
from django.db import DEFAULT_DB_ALIAS, connections
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import Status, StopReason, events, from_schema
from schemathesis.engine.events import EngineEvent
from schemathesis.engine.run import PhaseName
from schemathesis.generation import GenerationMode
from schemathesis.transport.wsgi import WSGI_TRANSPORT

from compliance_site.access.keys import api_key_create
from tests.compliance.api.schemathesis_hooks import map_case
from tests.compliance.builders import ESA
from tests.support.inprocess import wsgi_application
from tests.support.openapi_strict import openapi_core_strict

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

# The stateful phase needs OpenAPI links between operations; the API declares none, so it would
# only report that it has nothing to do. The resource-lifecycle checks (use_after_free,
# ensure_resource_availability, object_level_authorization) run on the webhooks the examples
# create.
PHASES = (PhaseName.EXAMPLES, PhaseName.COVERAGE, PhaseName.FUZZING)
OPERATIONS = 19
MAX_EXAMPLES = 30
SEED = 20260314


@contextmanager
def on_the_tests_connection() -> Iterator[Callable]:
    """The WSGI application, answering on the test's own database connection whichever thread
    calls it (schemathesis sends its requests from a worker thread), as Django's live server
    does for in-memory SQLite: the requests see what the test wrote in its transaction. One
    worker sends one request at a time while the test's thread waits for its events."""
    shared = connections[DEFAULT_DB_ALIAS]
    shared.inc_thread_sharing()

    def application(environ: dict, start_response: Callable) -> list[bytes]:
        connections[DEFAULT_DB_ALIAS] = shared
        return wsgi_application(environ, start_response)

    try:
        yield application
    finally:
        shared.dec_thread_sharing()


@pytest.fixture
def wsgi_transport_without_socket_options(monkeypatch) -> None:
    """schemathesis (4.32) sends the probe of its `ignored_auth` check through the WSGI transport
    with a network session's socket options (max_redirects, verify, cert, proxies), which
    werkzeug's client refuses; the transport drops them itself only when handed such a session.
    In-process they mean nothing, so they are dropped for every request."""
    send = WSGI_TRANSPORT.send

    def without_socket_options(case, *, session=None, **kwargs):
        for name in ("max_redirects", "verify", "cert", "proxies"):
            kwargs.pop(name, None)
        return send(case, session=session, **kwargs)

    monkeypatch.setattr(WSGI_TRANSPORT, "send", without_socket_options)


def run_schemathesis(application: Callable, api_key: str) -> list[EngineEvent]:
    """What `st run --checks all --phases examples,coverage,fuzzing --mode all --max-examples 30
    --seed 20260314 --workers 1 --generation-database none` with the key's header does."""
    config = SchemathesisConfig()
    config.update(seed=SEED, max_failures=None)
    project = config.projects.override
    project.update(headers={"Authorization": f"Bearer {api_key}"}, workers=1, request_timeout=10)
    project.phases.update(phases=[phase.value for phase in PHASES])
    # "all" takes the checks registered with schemathesis, openapi_core_strict among them.
    project.checks.update(included_check_names=["all"])
    project.generation.update(
        modes=list(GenerationMode), max_examples=MAX_EXAMPLES, database="none"
    )
    schema = schemathesis.openapi.from_wsgi("/api/v1/compliance/schema", application, config=config)
    schema.hook(map_case)
    return list(from_schema(schema).execute())


def problems(run: list[EngineEvent]) -> list[str]:
    """Every failed check and error of the run, readable."""
    found = []
    for event in run:
        if isinstance(event, events.ScenarioFinished) and event.status not in (
            Status.SUCCESS,
            Status.SKIP,
        ):
            found.append(f"{event.phase.value} {event.label}: {event.status.value}")
            for checks in event.recorder.checks.values():
                for check in checks:
                    if check.failure_info is not None:
                        failure = check.failure_info
                        found.append(f"  {check.name}: {failure.failure}\n{failure.code_sample}")
        elif isinstance(event, events.NonFatalError):
            found.append(f"error in {event.label}: {event.value!r}")
        elif isinstance(event, events.FatalError):
            found.append(f"fatal error: {event.exception!r}")
        elif isinstance(event, events.EngineFinished):
            found.extend(f"after the run: {failure}" for failure in event.failures)
    return found


def test_every_operation_answers_as_documented(
    data_repo, run_reindex, settings, wsgi_transport_without_socket_options
):
    settings.COMPLIANCE_ANONYMOUS_RATE_LIMIT = "1000000/m"
    data_repo.seed("TX", "CA")
    data_repo.update("TX", summary="Second.", esa_program=ESA)
    run_reindex()
    _key, raw = api_key_create(name="schemathesis", rate_limit_per_minute=1_000_000)

    with on_the_tests_connection() as application:
        run = run_schemathesis(application, raw)

    assert not problems(run), "\n".join(problems(run))
    checked = {
        check.name
        for event in run
        if isinstance(event, events.ScenarioFinished)
        for checks in event.recorder.checks.values()
        for check in checks
    }
    assert openapi_core_strict.__name__ in checked
    (finished,) = [event for event in run if isinstance(event, events.EngineFinished)]
    assert finished.stop_reason == StopReason.COMPLETED
    # Every operation went through every phase, and every phase passed.
    phase_status = {
        event.phase.name: event.status for event in run if isinstance(event, events.PhaseFinished)
    }
    tested = defaultdict(set)
    for event in run:
        if isinstance(event, events.ScenarioFinished):
            tested[event.phase].add(event.label)
    for phase in PHASES:
        assert phase_status[phase] == Status.SUCCESS, (phase, phase_status)
        assert len(tested[phase]) == OPERATIONS, (phase, sorted(tested[phase]))
