"""The sync loop the API documents, written once.

A sync is one pass over the change feed: the first page's `meta.sync_token` is remembered, the
pages are followed by `meta.next_cursor` (the cursor pins the walk to the feed as it stood at
the first page, so events published meanwhile neither appear twice nor slip through: they come
in the next pass), and the next pass sends the remembered token, which returns exactly the
events published after it whatever their `committed_at`. The feed pages newest first; a pass's
events are emitted oldest first once it is complete, so a consumer applying them in order ends
at each resource's latest version.

After every page the checkpoint (what the pass collected and the next cursor) is replaced
atomically, so a process killed mid-pass starts again from its last page; the pass is emitted
and the checkpoint moved on only at the end. 429 and 503 are retried after `Retry-After`;
answers with an ETag are revalidated with `If-None-Match`.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from compliance_sync.checkpoint import Checkpoint, checkpoint_load, checkpoint_save

USER_AGENT = "compliance-sync/1.0"
RETRY_STATUSES = (429, 503)


class ApiError(Exception):
    """An answer the sync cannot go on from (a bad key, an invalid token, retries used up)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code

    @classmethod
    def from_response(cls, response: httpx.Response) -> "ApiError":
        try:
            error = response.json()["error"]
            return cls(response.status_code, str(error["code"]), str(error["message"]))
        except (ValueError, KeyError, TypeError):
            return cls(response.status_code, "unexpected_answer", response.text[:200])


@dataclass(frozen=True)
class SyncResult:
    events: list[dict[str, Any]]  # emitted, oldest first
    pages: int
    complete: bool  # False when `stop` ended the pass early (resumed by the next sync)


class ComplianceClient:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        page_size: int = 100,
        max_retries: int = 8,
        timeout: float = 30,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._http = httpx.Client(
            base_url=base_url.rstrip("/") + "/",
            headers={"Authorization": f"Bearer {api_key}", "User-Agent": USER_AGENT},
            timeout=timeout,
            transport=transport,
        )
        self.page_size = page_size
        self.max_retries = max_retries
        self._sleep = sleep
        # The last body and ETag of each URL that sent one, for `If-None-Match`.
        self._validated: dict[str, tuple[str, Any]] = {}

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "ComplianceClient":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        """The JSON body of `GET path`, retried on 429/503 and connection errors."""
        request = self._http.build_request("GET", path.lstrip("/"), params=params)
        key = str(request.url)
        for attempt in range(self.max_retries + 1):
            kept = self._validated.get(key)
            if kept is not None:
                request.headers["If-None-Match"] = kept[0]
            try:
                response = self._http.send(request)
            except httpx.TransportError:
                if attempt == self.max_retries:
                    raise
                self._sleep(min(2**attempt, 60))
                continue
            if response.status_code == 304 and kept is not None:
                return kept[1]
            if response.status_code in RETRY_STATUSES and attempt < self.max_retries:
                self._sleep(_retry_after(response, attempt))
                continue
            if response.status_code >= 400:
                raise ApiError.from_response(response)
            body = response.json()
            if "ETag" in response.headers:
                self._validated[key] = (response.headers["ETag"], body)
            return body
        raise AssertionError("unreachable: the last attempt returns or raises")

    def states(self, *, as_of: str | None = None) -> dict[str, Any]:
        """Every state in one answer (`GET /states`), revalidated by its ETag."""
        return self.get("states", {"as_of": as_of} if as_of else None)

    def sync(
        self,
        state: Path,
        *,
        emit: Callable[[dict[str, Any]], None] = lambda event: None,
        stop: Callable[[], bool] = lambda: False,
    ) -> SyncResult:
        """One pass from the checkpoint in `state`: a full sync the first time, after that the
        events published since the last completed pass. `stop` is asked between pages."""
        checkpoint = checkpoint_load(state)
        pages = 0
        while True:
            if stop():
                return SyncResult(events=[], pages=pages, complete=False)
            page = self.get("changes", _page_params(checkpoint, self.page_size))
            pages += 1
            meta = page["meta"]
            if not checkpoint.in_pass:
                checkpoint.pass_token = meta["sync_token"]
            checkpoint.pending.extend(page["data"])
            checkpoint.cursor = meta.get("next_cursor")
            if checkpoint.cursor is None:
                break
            checkpoint_save(state, checkpoint)
        events = list(reversed(checkpoint.pending))
        for event in events:
            emit(event)
        checkpoint_save(state, Checkpoint(sync_token=checkpoint.pass_token))
        return SyncResult(events=events, pages=pages, complete=True)


def _page_params(checkpoint: Checkpoint, page_size: int) -> dict[str, Any]:
    # A cursor is bound to the filters it was issued with: the pass sends the same sync_token
    # on every page.
    params: dict[str, Any] = {"limit": page_size}
    if checkpoint.sync_token:
        params["sync_token"] = checkpoint.sync_token
    if checkpoint.cursor:
        params["cursor"] = checkpoint.cursor
    return params


def _retry_after(response: httpx.Response, attempt: int) -> float:
    value = response.headers.get("Retry-After", "")
    if value.isascii() and value.isdigit():
        return min(int(value), 3600)
    return min(2**attempt, 60)
