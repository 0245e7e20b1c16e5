"""Which payload schema major the data repository's state files follow, commit by commit.

The data repository declares it in one top-level file, `schema.yaml`:

    state_schema_version: 2

A repository without the file follows major 1. The commit that changes the declaration must
convert every state file in the same commit (docs/compliance-data.md, "Bumping the schema
major"): reindex reads every state file of that commit again under the new major, so a file
left behind is reported, not published.
"""

import yaml

from compliance_site.records.documents import FIRST_SCHEMA_VERSION, schema_versions
from shared.untrusted_text import without_unpublishable

DECLARATION_PATH = "schema.yaml"
DECLARATION_KEY = "state_schema_version"
# A declaration is one line; anything much larger is not one.
MAX_DECLARATION_BYTES = 4096


class InvalidDeclaration(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def declared_major(content: bytes | None) -> str:
    """The major a `schema.yaml` declares (None: the file is absent, major 1), or raise
    InvalidDeclaration."""
    if content is None:
        return FIRST_SCHEMA_VERSION
    if len(content) > MAX_DECLARATION_BYTES:
        raise InvalidDeclaration(f"{DECLARATION_PATH}: over {MAX_DECLARATION_BYTES} bytes")
    try:
        data = yaml.safe_load(content)
    except yaml.YAMLError as exc:
        raise InvalidDeclaration(f"{DECLARATION_PATH}: invalid YAML: {exc}") from exc
    value = data.get(DECLARATION_KEY) if isinstance(data, dict) else None
    major = str(value) if isinstance(value, int) and not isinstance(value, bool) else None
    if major not in schema_versions():
        shown = without_unpublishable(repr(value))[:40]
        raise InvalidDeclaration(
            f"{DECLARATION_PATH}: {DECLARATION_KEY} must be one of "
            f"{', '.join(schema_versions())} (a schema file this service has), not {shown}"
        )
    return major
