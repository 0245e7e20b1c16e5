"""The JSON log format both services write, and the request ids it carries."""

import json
import logging
import sys

import pytest

from shared.logs import JsonFormatter, RequestContext, request_id_from, serving


def record(message: str = "hello %s", *args: object, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord("shared.test", logging.WARNING, __file__, 1, message, args, None)
    made.__dict__.update(extra)
    return made


def test_a_record_is_one_json_line_with_time_level_logger_message_and_service():
    line = JsonFormatter(service="compliance").format(record("hello %s", "world"))

    entry = json.loads(line)
    assert "\n" not in line
    assert entry["level"] == "WARNING"
    assert entry["logger"] == "shared.test"
    assert entry["message"] == "hello world"
    assert entry["service"] == "compliance"
    assert entry["time"].endswith("Z")
    assert "request_id" not in entry


def test_a_line_logged_while_serving_a_request_carries_its_id():
    with serving(RequestContext("req-42")):
        inside = json.loads(JsonFormatter().format(record()))
    after = json.loads(JsonFormatter().format(record()))

    assert inside["request_id"] == "req-42"
    assert "request_id" not in after


def test_a_line_about_a_request_carries_the_id_left_on_the_request():
    class Request:
        request_id = "left-on-request"

    entry = json.loads(JsonFormatter().format(record(request=Request(), status_code=404)))

    assert entry["request_id"] == "left-on-request"
    assert entry["status_code"] == 404
    assert "request" not in entry


def test_extra_fields_and_the_traceback_are_part_of_the_object():
    try:
        raise ValueError("boom")
    except ValueError:
        failed = record("failed", route="/x", duration_ms=1.5)
        failed.exc_info = sys.exc_info()

    entry = json.loads(JsonFormatter().format(failed))

    assert entry["route"] == "/x"
    assert entry["duration_ms"] == 1.5
    assert "ValueError: boom" in entry["exception"]


@pytest.mark.parametrize(
    "value", ["4bf92f3577b34da6a3ce929d0e0e4736", "a1b2c3d4-0000-4000-8000-000000000000", "x.y:z"]
)
def test_a_well_formed_incoming_request_id_is_kept(value):
    assert request_id_from(value) == value


@pytest.mark.parametrize("value", [None, "", "has space", 'quote"', "line\nbreak", "a" * 129])
def test_a_missing_or_malformed_request_id_is_replaced_by_a_new_one(value):
    made = request_id_from(value)

    assert made != value
    assert len(made) == 32
    assert made != request_id_from(value)
