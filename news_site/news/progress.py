"""What a long step tells whoever runs it (the `ingest` command draws a progress bar)."""

from typing import Protocol


class Progress(Protocol):
    def start(self, label: str, total: int) -> None: ...

    def advance(self) -> None: ...


class NoProgress:
    def start(self, label: str, total: int) -> None:
        pass

    def advance(self) -> None:
        pass
