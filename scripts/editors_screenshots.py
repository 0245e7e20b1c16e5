"""Copy the editors' screenshots the browser tests took into docs/img/editors/.

    .venv/bin/pytest tests/browser -m embedded_only    # writes var/screenshots/editors-*.png
    python scripts/editors_screenshots.py               # copies them for docs/editors.md

`var/screenshots/editors-story-page.png` becomes `docs/img/editors/story-page.png`. A picture of
150 KB or more is refused (the repository holds small images only): take it of a smaller part
of the page in the test.
"""

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "var" / "screenshots"
TARGET = ROOT / "docs" / "img" / "editors"
MAX_BYTES = 150 * 1024


def main() -> int:
    shots = sorted(SOURCE.glob("editors-*.png"))
    if not shots:
        print(f"no editors-*.png in {SOURCE}: run the browser tests first", file=sys.stderr)
        return 1
    TARGET.mkdir(parents=True, exist_ok=True)
    refused = 0
    for shot in shots:
        size = shot.stat().st_size
        if size >= MAX_BYTES:
            print(f"refused {shot.name}: {size // 1024} KB (at most 149)", file=sys.stderr)
            refused += 1
            continue
        name = shot.name.removeprefix("editors-")
        shutil.copyfile(shot, TARGET / name)
        print(f"{TARGET.relative_to(ROOT) / name} ({size // 1024} KB)")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
