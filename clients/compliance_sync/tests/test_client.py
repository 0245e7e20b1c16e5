import pytest

from compliance_sync import ApiError, ComplianceClient, checkpoint_load


def _page(events, token, cursor=None):
    meta = {"api_version": "v1", "count": len(events), "sync_token": token}
    if cursor:
        meta["next_cursor"] = cursor
    return {"data": events, "meta": meta}


def _event(key, version):
    return {"resource_type": "State", "resource_key": key, "version": version}


def test_a_pass_follows_cursors_and_emits_oldest_first(fake_api, tmp_path):
    fake_api.answer(200, _page([_event("TX", 3), _event("TX", 2)], "T1", cursor="C1"))
    fake_api.answer(200, _page([_event("TX", 1)], "T1"))
    fake_api.answer(200, _page([_event("OH", 1)], "T2"))
    state = tmp_path / "state.json"
    seen = []

    with ComplianceClient(base_url=fake_api.url, api_key="k", page_size=2) as client:
        first = client.sync(state, emit=seen.append)
        second = client.sync(state)

    assert [e["version"] for e in first.events] == [1, 2, 3]
    assert seen == first.events
    assert [e["resource_key"] for e in second.events] == ["OH"]
    paths = [path for path, _headers in fake_api.requests]
    assert paths[0].endswith("/changes?limit=2")
    assert paths[1].endswith("/changes?limit=2&cursor=C1")
    assert paths[2].endswith("/changes?limit=2&sync_token=T1")
    assert checkpoint_load(state).sync_token == "T2"
    assert fake_api.requests[0][1]["Authorization"] == "Bearer k"


def test_retry_after_is_honoured_on_429_and_503(fake_api, tmp_path):
    fake_api.answer(
        429, {"error": {"code": "rate_limit_exceeded", "message": "m"}}, Retry_After="7"
    )
    fake_api.answer(
        503, {"error": {"code": "service_unavailable", "message": "m"}}, Retry_After="2"
    )
    fake_api.answer(200, _page([_event("TX", 1)], "T1"))
    slept = []

    with ComplianceClient(base_url=fake_api.url, api_key="k", sleep=slept.append) as client:
        result = client.sync(tmp_path / "state.json")

    assert slept == [7, 2]
    assert len(result.events) == 1


def test_a_stop_between_pages_keeps_the_pass_for_the_next_run(fake_api, tmp_path):
    fake_api.answer(200, _page([_event("TX", 2)], "T1", cursor="C1"))
    fake_api.answer(200, _page([_event("TX", 1)], "T1"))
    state = tmp_path / "state.json"
    calls = iter([False, True])

    with ComplianceClient(base_url=fake_api.url, api_key="k") as client:
        stopped = client.sync(state, stop=lambda: next(calls))
        resumed = client.sync(state)

    assert not stopped.complete and stopped.events == []
    assert checkpoint_load(state).cursor is None
    assert [e["version"] for e in resumed.events] == [1, 2]
    assert fake_api.requests[1][0].endswith("cursor=C1")


def test_an_etag_revalidates_and_a_304_returns_the_kept_body(fake_api):
    body = {"data": [{"abbreviation": "TX"}], "meta": {"count": 1}}
    fake_api.answer(200, body, ETag='"states-1"')
    fake_api.answer(304, None, ETag='"states-1"')

    with ComplianceClient(base_url=fake_api.url, api_key="k") as client:
        first = client.states()
        again = client.states()

    assert first == again == body
    assert fake_api.requests[1][1]["If-None-Match"] == '"states-1"'


def test_an_error_answer_stops_the_sync_with_its_code(fake_api, tmp_path):
    fake_api.answer(400, {"error": {"code": "invalid_cursor", "message": "the token is not valid"}})

    with (
        ComplianceClient(base_url=fake_api.url, api_key="k") as client,
        pytest.raises(ApiError) as exc,
    ):
        client.sync(tmp_path / "state.json")

    assert exc.value.code == "invalid_cursor"
    assert not (tmp_path / "state.json").exists()
