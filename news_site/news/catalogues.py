"""The admin's translation catalogues: each `<locale dir>/<language>/LC_MESSAGES/*.po` compiled
to the `.mo` Django reads.

The `.po` files are the source kept in git; the `.mo` files are build output, written at
install, deploy and test time. polib compiles them in Python, so no machine needs GNU gettext's
msgfmt (which Django's own compilemessages calls) to run the service (docs/decisions.md).
"""

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import polib


def catalogues_compile(*, locale_dirs: Iterable[Path]) -> list[Path]:
    """Compile every catalogue under the given locale directories; answer the `.mo` paths."""
    compiled = []
    for locale_dir in locale_dirs:
        for po_path in sorted(Path(locale_dir).glob("*/LC_MESSAGES/*.po")):
            mo_path = po_path.with_suffix(".mo")
            # Fuzzy and untranslated entries are left out, as msgfmt does.
            catalogue = polib.pofile(str(po_path))
            # Written beside the target and moved into place: a process reading the catalogue
            # (a running server, another test worker compiling at the same time) never sees
            # half a file.
            handle, temporary = tempfile.mkstemp(dir=mo_path.parent, prefix=".mo-")
            os.close(handle)
            catalogue.save_as_mofile(temporary)
            os.chmod(temporary, 0o644)
            os.replace(temporary, mo_path)
            compiled.append(mo_path)
    return compiled
