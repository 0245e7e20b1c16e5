"""Reading one state file: YAML in, a validated payload (plain JSON types) out."""

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator, ValidationError

from shared.untrusted_text import first_unpublishable

SCHEMA_DIR = Path(__file__).parent / "schemas"
# The major a data repository follows until it declares another (compliance_site/records/
# schemadecl.py): the first one, which every history starts with.
FIRST_SCHEMA_VERSION = "1"
STATE_PATH = re.compile(r"^states/(?P<stem>[^/]+)\.yaml$")

JURISDICTIONS = frozenset(
    (
        "AL",
        "AK",
        "AZ",
        "AR",
        "CA",
        "CO",
        "CT",
        "DE",
        "DC",
        "FL",
        "GA",
        "HI",
        "ID",
        "IL",
        "IN",
        "IA",
        "KS",
        "KY",
        "LA",
        "ME",
        "MD",
        "MA",
        "MI",
        "MN",
        "MS",
        "MO",
        "MT",
        "NE",
        "NV",
        "NH",
        "NJ",
        "NM",
        "NY",
        "NC",
        "ND",
        "OH",
        "OK",
        "OR",
        "PA",
        "RI",
        "SC",
        "SD",
        "TN",
        "TX",
        "UT",
        "VT",
        "VA",
        "WA",
        "WV",
        "WI",
        "WY",
    )
)

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _PayloadLoader(_Loader):  # type: ignore[misc, valid-type]
    """Safe YAML without implicit timestamps: dates stay ISO strings and are checked by the
    schema's `format: date`, so `2026-02-30` is a schema error with a path, not a crash."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # PyYAML keeps the last of two equal keys: a reviewer reads the first `name`, the
        # service would publish the second. A duplicate is this file's error instead.
        seen: set[Any] = set()
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:
                continue  # unhashable: the base class reports it
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found duplicate key {str(key)[:80]!r}",
                    key_node.start_mark,
                )
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


_PayloadLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _Loader.yaml_implicit_resolvers.items()
}


# Bounds on what the YAML parser is handed and builds. A state file is a few kilobytes and a few
# levels deep; the bounds refuse, as an invalid file, the inputs that would make parsing cost
# exponential time and memory (alias expansion) or crash it (deep nesting overflows the
# stack of the recursive composer, in C or in Python).
MAX_FILE_BYTES = 512 * 1024
MAX_DEPTH = 32
# Per line, the run of indentation and block markers ("- ", "? ") before a node starts.
_LEADING_RUN = re.compile(rb"^[ ?-]*", re.MULTILINE)
_OPENING = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSING = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


class InvalidDocument(Exception):
    def __init__(self, message: str, schema_path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.schema_path = schema_path


@dataclass(frozen=True)
class StateDocument:
    abbreviation: str
    payload: dict[str, Any]


def schema_path(major: str) -> Path:
    return SCHEMA_DIR / f"state.v{major}.schema.json"


@cache
def schema_versions() -> tuple[str, ...]:
    """The majors with a schema file, in order: each is locked once released."""
    found = (path.name.split(".")[1][1:] for path in SCHEMA_DIR.glob("state.v*.schema.json"))
    return tuple(sorted((major for major in found if major.isdigit()), key=int))


@cache
def schema(major: str = FIRST_SCHEMA_VERSION) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(schema_path(major).read_text())
    Draft202012Validator.check_schema(document)
    return document


@cache
def validator(major: str = FIRST_SCHEMA_VERSION) -> Draft202012Validator:
    """The whole-document validator of one locked schema."""
    return Draft202012Validator(schema(major), format_checker=Draft202012Validator.FORMAT_CHECKER)


# Top-level keywords under which a document's keys are validated independently of each other.
_DECOMPOSABLE = {"$schema", "$id", "title", "description", "type", "required", "properties"}
_DECOMPOSABLE |= {"additionalProperties"}


class StateValidator:
    """Validates the many versions of the same files that one reindex reads.

    A commit usually changes one or two top-level keys of a file, so each distinct top-level
    value is validated once per run and remembered. This gives the same verdict as validating
    the whole document because the schema's top level only checks the type, the required and
    allowed keys, and each key's value on its own (`_DECOMPOSABLE`); a schema with other
    top-level keywords is validated whole.
    """

    def __init__(self, major: str = FIRST_SCHEMA_VERSION) -> None:
        document = schema(major)
        checker = Draft202012Validator.FORMAT_CHECKER
        self._decomposable = set(document) <= _DECOMPOSABLE
        shell = {k: v for k, v in document.items() if k != "properties"}
        shell["properties"] = dict.fromkeys(document.get("properties", {}), True)
        self._shell = Draft202012Validator(
            shell if self._decomposable else document, format_checker=checker
        )
        self._properties = {
            key: Draft202012Validator(subschema, format_checker=checker)
            for key, subschema in document.get("properties", {}).items()
        }
        self._valid: set[tuple[str, str]] = set()

    def first_error(self, data: dict[str, Any]) -> tuple[str, str, str] | None:
        """(location, message, schema path) of the first error, or None when valid."""
        error = _first(self._shell.iter_errors(data))
        if error is not None or not self._decomposable:
            return _described(error, (), ()) if error else None
        for key in sorted(data):
            # repr is a cheap identity for parsed YAML (same order, same value).
            memo = (key, repr(data[key]))
            if memo in self._valid:
                continue
            error = _first(self._properties[key].iter_errors(data[key]))
            if error is not None:
                return _described(error, (key,), ("properties", key))
            self._valid.add(memo)
        return None


def _first(errors: Iterable[ValidationError]) -> ValidationError | None:
    return min(errors, key=_error_order, default=None)


def _described(
    error: ValidationError, path: tuple[str, ...], schema_path: tuple[str, ...]
) -> tuple[str, str, str]:
    location = "/".join(str(part) for part in (*path, *error.absolute_path)) or "(document)"
    schema_location = "/".join(str(part) for part in (*schema_path, *error.absolute_schema_path))
    return location, error.message, schema_location


def abbreviation_for_path(path: str) -> str | None:
    """The jurisdiction a repository path belongs to, or None for files reindex ignores."""
    match = STATE_PATH.match(path)
    return match["stem"] if match else None


def parse_state(path: str, content: bytes, *, checker: StateValidator) -> StateDocument:
    stem = abbreviation_for_path(path)
    if stem is None:
        raise InvalidDocument(f"{path} is not a state file (states/<ABBR>.yaml)")
    if stem not in JURISDICTIONS:
        raise InvalidDocument(
            f"{path}: '{stem}' is not one of the 51 jurisdictions' upper-case abbreviations"
        )
    try:
        _check_bounds(path, content)
        data = yaml.load(content, Loader=_PayloadLoader)  # noqa: S506 - a safe loader subclass
    except yaml.YAMLError as exc:
        raise InvalidDocument(f"{path}: invalid YAML: {exc}") from exc
    except (ValueError, TypeError, AttributeError, RecursionError) as exc:
        # PyYAML's constructors fail this way on an explicit tag whose value does not hold
        # (`!!timestamp 2026-02-30`, `!!int x`): still this file's error, not the run's.
        raise InvalidDocument(f"{path}: invalid YAML value: {exc}") from exc
    if not isinstance(data, dict):
        raise InvalidDocument(f"{path}: the document must be a mapping", schema_path="type")
    _refuse_unpublishable(path, data)
    error = checker.first_error(data)
    if error is not None:
        location, message, schema_path = error
        raise InvalidDocument(f"{path}: {location}: {message}", schema_path=schema_path)
    if data["abbreviation"] != stem:
        raise InvalidDocument(
            f"{path}: abbreviation {data['abbreviation']!r} does not match the file name",
            schema_path="properties/abbreviation",
        )
    return StateDocument(abbreviation=stem, payload=data)


def _refuse_unpublishable(path: str, data: dict[str, Any]) -> None:
    """Refuse the whole file when any key or string value holds a character no store can hold
    (shared/untrusted_text.py): cleaning it would publish something no reviewer read, and the
    two database backends would not store the same thing."""
    pending: list[tuple[tuple[str, ...], Any]] = [((), data)]
    while pending:
        location, value = pending.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                where = (*location, str(key))
                if isinstance(key, str):
                    _refuse_in_string(path, where, key, "key")
                pending.append((where, item))
        elif isinstance(value, list):
            pending.extend(((*location, str(i)), item) for i, item in enumerate(value))
        elif isinstance(value, str):
            _refuse_in_string(path, location, value, "value")


def _refuse_in_string(path: str, location: tuple[str, ...], text: str, what: str) -> None:
    found = first_unpublishable(text)
    if found is None:
        return
    position, code_point = found
    shown = "/".join(part.encode("unicode_escape").decode("ascii") for part in location)
    raise InvalidDocument(
        f"{path}: {shown or '(document)'}: the {what} holds {code_point} at character "
        f"{position}, a control, surrogate, noncharacter or bidirectional override that state "
        "files may not contain"
    )


def _check_bounds(path: str, content: bytes) -> None:
    """Refuse a file that is too large, uses aliases or nests too deeply, before any node is
    built. libyaml's event parser keeps its own stack, so reading events is linear and safe at
    any depth, and the walk stops at the first offence."""
    if len(content) > MAX_FILE_BYTES:
        raise InvalidDocument(
            f"{path}: the file is {len(content)} bytes; the limit is {MAX_FILE_BYTES}"
        )
    if not _may_exceed_bounds(content):
        return
    depth = 0
    try:
        for event in yaml.parse(content, Loader=_Loader):
            if isinstance(event, yaml.AliasEvent):
                raise InvalidDocument(
                    f"{path}: YAML aliases (*{event.anchor}) are not allowed in state files"
                )
            if isinstance(event, _OPENING):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _too_deep(path, event.start_mark)
            elif isinstance(event, _CLOSING):
                depth -= 1
    except yaml.MarkedYAMLError as exc:
        # libyaml 0.2.6 and newer (PyYAML 6.0.3+ wheels) stop at 1,000 levels in the scanner,
        # which reads ahead of the events; the file breaks the same rule, so it gets the
        # same message whichever libyaml is installed.
        if "nesting depth" in (exc.problem or ""):
            raise _too_deep(path, exc.problem_mark) from exc
        raise


def _too_deep(path: str, mark: Any) -> InvalidDocument:
    return InvalidDocument(
        f"{path}: nested more than {MAX_DEPTH} levels deep (line {mark.line + 1})"
    )


def _may_exceed_bounds(content: bytes) -> bool:
    """Whether the file could hold an alias or nest deeper than MAX_DEPTH; False is a proof
    that it cannot, which spares the event walk (a third of a parse) for ordinary files.

    An alias needs a `*`. A flow collection needs a `[` or `{`. A block collection starts
    where its line's leading run of spaces and markers ends, and every two block levels move
    that column right by at least one (a sequence may sit at its parent key's indentation,
    its entries may not), so block depth is at most 2 * (longest leading run + 1).
    """
    if b"*" in content:
        return True
    flow = content.count(b"[") + content.count(b"{")
    leading = max((len(run) for run in _LEADING_RUN.findall(content)), default=0)
    return 2 * (leading + 1) + flow > MAX_DEPTH


def _error_order(error: Any) -> tuple[int, str]:
    return (len(error.absolute_path), "/".join(str(part) for part in error.absolute_path))


def payload_hash(payload: Any) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def key_diff(previous: Any, current: Any) -> dict[str, list[str]]:
    """Top-level keys added, removed and changed between two payloads (mappings or None)."""
    before = previous if isinstance(previous, dict) else {}
    after = current if isinstance(current, dict) else {}
    return {
        "added_keys": sorted(after.keys() - before.keys()),
        "removed_keys": sorted(before.keys() - after.keys()),
        "changed_keys": sorted(k for k in after.keys() & before.keys() if after[k] != before[k]),
    }
