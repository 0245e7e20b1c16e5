"""Fuzz of the compliance service's decoders of outside input, beyond the byte-level fuzz in
test_reindex_faults: YAML documents of any shape (anchors, tags, mutated valid records) give a
StateDocument or InvalidDocument, and change-feed cursors and sync tokens, garbled or signed with
contents of any shape, decode or raise InvalidToken, never anything else."""

import yaml
from django.core import signing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_site.records.changefeed import (
    CURSOR_VERSION,
    FeedFilters,
    InvalidToken,
    Position,
    cursor_decode,
    cursor_encode,
    sync_token_decode,
)
from compliance_site.records.documents import InvalidDocument, StateValidator, parse_state
from tests.compliance.builders import state_payload

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CHECKER = StateValidator()

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=30),
    st.dates(),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
_KEYS = st.sampled_from([*sorted(state_payload("TX")), "esa_program", "extra"])


def _parses_or_is_invalid(content: bytes) -> None:
    try:
        document = parse_state("states/TX.yaml", content, checker=CHECKER)
    except InvalidDocument as exc:
        assert exc.message.startswith("states/TX.yaml")
    else:
        assert document.abbreviation == "TX"


@FUZZ
@given(key=_KEYS, value=_VALUES)
def test_a_valid_record_with_any_one_value_replaced_parses_or_is_invalid(key, value):
    payload = state_payload("TX")
    payload[key] = value
    _parses_or_is_invalid(yaml.safe_dump(payload, allow_unicode=True).encode())


@FUZZ
@given(document=_VALUES)
def test_yaml_of_any_shape_parses_or_is_invalid(document):
    _parses_or_is_invalid(yaml.safe_dump(document).encode())


@FUZZ
@given(
    valid=st.just(yaml.safe_dump(state_payload("TX"))),
    insertion=st.sampled_from(
        [
            "!!python/object/apply:os.system ['true']",
            "!!python/name:os.system",
            "!!binary aGVsbG8=",
            "!!timestamp 2026-02-30",
            "&a [*a]",
            "*undefined",
            "<<: {x: 1}",
            "{? [a]: b}",
            "2026-02-30",
            "'\\x00'",
            "%YAML 1.1\n---",
            "--- \n...\n---",
            ": :",
            "\t",
        ]
    ),
    at=st.integers(min_value=0, max_value=400),
)
def test_hostile_yaml_spliced_into_a_record_parses_or_is_invalid(valid, insertion, at):
    _parses_or_is_invalid((valid[:at] + insertion + valid[at:]).encode())


FILTERS = FeedFilters(resource_type="State")


def _decodes_or_is_refused(token: str) -> None:
    try:
        position = cursor_decode(token, FILTERS)
    except InvalidToken as exc:
        assert str(exc)
    else:
        assert isinstance(position, Position)
    try:
        sequence = sync_token_decode(token)
    except InvalidToken as exc:
        assert str(exc)
    else:
        assert sequence >= 0


@FUZZ
@given(token=st.text(max_size=600))
def test_any_text_as_a_cursor_or_sync_token_is_decoded_or_refused(token):
    _decodes_or_is_refused(token)


@FUZZ
@given(cut=st.integers(min_value=0, max_value=200), junk=st.text(max_size=8))
def test_a_garbled_genuine_cursor_is_refused(cut, junk):
    from datetime import UTC, datetime

    genuine = cursor_encode(Position(datetime(2026, 1, 6, tzinfo=UTC), 5, 9), FILTERS)
    garbled = genuine[:cut] + junk + genuine[cut + len(junk) :]
    if garbled == genuine:
        return
    _decodes_or_is_refused(garbled)


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


@FUZZ
@given(
    fields=st.fixed_dictionaries(
        {},
        optional={
            "v": st.just(CURSOR_VERSION) | _JSONISH,
            "f": st.just(FILTERS.fingerprint()) | _JSONISH,
            "t": _JSONISH,
            "s": _JSONISH,
            "h": _JSONISH,
        },
    )
    | _JSONISH,
    salt=st.sampled_from(["compliance.changes.cursor", "compliance.changes.sync"]),
)
def test_signed_tokens_of_any_shape_are_decoded_or_refused(fields, salt):
    # Tokens we could have signed ourselves (an older format, a bug): the decoder must still
    # answer InvalidToken rather than fail on a field of an unexpected type.
    _decodes_or_is_refused(signing.Signer(salt=salt).sign_object(fields, compress=True))
