"""The migrations record the admin's English source labels only (their Swedish is the
catalogue's, news_site/locale), and the migrations that took the Swedish labels out change no
table and no row."""

import ast
from pathlib import Path

import polib
import pytest
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations import AlterField, AlterModelOptions
from django.db.models import Field

REPO_ROOT = Path(__file__).resolve().parents[3]
CATALOGUE = REPO_ROOT / "news_site" / "locale" / "sv" / "LC_MESSAGES" / "django.po"
MIGRATIONS = sorted((REPO_ROOT / "news_site").glob("*/migrations/0*.py"))
LABEL_MIGRATIONS = [
    ("news", "0004_swedish_admin_labels"),
    ("news", "0011_english_source_labels"),
    ("accounts", "0002_swedish_admin_labels"),
    ("accounts", "0004_english_source_labels"),
    ("podcasts", "0003_swedish_admin_labels"),
    ("podcasts", "0006_english_source_labels"),
    ("search", "0003_swedish_admin_labels"),
    ("search", "0004_english_source_labels"),
]


def _strings(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def _swedish() -> set[str]:
    texts = set()
    for entry in polib.pofile(str(CATALOGUE)):
        for text in (entry.msgstr, *entry.msgstr_plural.values()):
            if text and text != entry.msgid:
                texts.add(text)
    return texts


def test_no_migration_holds_a_swedish_label():
    swedish = _swedish()
    assert "flöden" in swedish
    for path in MIGRATIONS:
        strings = _strings(path)
        assert strings & swedish == set(), path.name
        assert [text for text in strings if set(text) & set("åäöÅÄÖ")] == [], path.name


@pytest.mark.parametrize(("app", "name"), LABEL_MIGRATIONS)
def test_the_label_migrations_change_no_table(app, name):
    # Every operation only changes what Django keeps outside the database (labels, help texts,
    # choices, model options), so applying or unapplying one leaves tables and rows as they are.
    loader = MigrationLoader(None, ignore_no_migrations=True)
    migration = loader.get_migration(app, name)
    state = loader.project_state((app, name), at_end=False)
    for operation in migration.operations:
        assert isinstance(operation, AlterField | AlterModelOptions), operation
        if isinstance(operation, AlterField):
            old = state.models[app, operation.model_name_lower].fields[operation.name]
            assert _stored(old) == _stored(operation.field), operation.name
        operation.state_forwards(app, state)
    assert migration.operations or name.endswith("swedish_admin_labels")


def _stored(field: Field) -> tuple[str, dict]:
    """What of a field the database holds: its path and the arguments that shape the column."""
    _, path, _, kwargs = field.deconstruct()
    return path, {key: value for key, value in kwargs.items() if key not in field.non_db_attrs}
