"""Reading a fetched body (shared/fetch.py) under a cap on its decoded size: gzip and deflate
are inflated chunk by chunk, never producing more than the cap allows, so a compression bomb
costs a bounded amount of memory."""

import zlib

import httpx

from shared.fetch_errors import FetchError

# Only encodings BoundedDecoder can inflate without unbounded memory; see read_capped.
ACCEPT_ENCODING = "gzip, deflate"
_GZIP_MAGIC = b"\x1f\x8b"


def read_capped(response: httpx.Response, max_bytes: int) -> bytes:
    too_large = FetchError(
        "too_large", f"response from {response.url.host} exceeds {max_bytes} bytes"
    )
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise too_large
    decoder = BoundedDecoder(response.headers.get("Content-Encoding", ""), response.url.host)
    body = bytearray()
    # Raw chunks, decoded by us: httpx would inflate a whole network read at once, and a
    # 64 KiB read of a gzip bomb is tens of megabytes before any size check could run.
    for chunk in response.iter_raw():
        body += decoder.decode(chunk, max_bytes - len(body) + 1)
        if len(body) > max_bytes:
            raise too_large
    body += decoder.flush()
    if len(body) > max_bytes:
        raise too_large
    return bytes(body)


class BoundedDecoder:
    """Undoes gzip or deflate without ever producing more output than asked for."""

    def __init__(self, content_encoding: str, host: str) -> None:
        codings = [
            part.strip().lower()
            for part in content_encoding.split(",")
            if part.strip().lower() not in ("", "identity")
        ]
        self._host = host
        self._coding = codings[0] if len(codings) == 1 else None
        if codings and self._coding not in ("gzip", "x-gzip", "deflate"):
            # We only advertise gzip and deflate, so anything else breaks the protocol.
            raise FetchError("connection_error", f"{host} sent an unsupported content encoding")
        self._inflater = self._new_inflater() if codings else None
        self._started = False
        # gzip bodies may hold several members one after another (RFC 1952 2.2; `cat a.gz
        # b.gz`, some servers' streamed compression): each is inflated in turn. Bytes after a
        # member are kept here until it is known whether they start another one.
        self._after_member = b""
        self._trailing_garbage = False

    def _new_inflater(self, raw: bool = False) -> "zlib._Decompress":
        if raw:
            return zlib.decompressobj(-zlib.MAX_WBITS)
        if self._coding == "deflate":
            return zlib.decompressobj(zlib.MAX_WBITS)
        return zlib.decompressobj(zlib.MAX_WBITS | 16)

    def decode(self, data: bytes, max_length: int) -> bytes:
        if self._inflater is None:
            return data
        if self._coding != "deflate":
            return self._gunzip(self._inflater, data, max_length)
        first, self._started = not self._started, True
        try:
            # With max_length, input that would inflate further stays in unconsumed_tail; the
            # caller stops as soon as the output reaches max_length, so it is never needed.
            return self._inflater.decompress(data, max_length)
        except zlib.error as exc:
            if not (first and self._coding == "deflate"):
                raise self._corrupt() from exc
        # "deflate" should be zlib-wrapped, but some servers send a raw deflate stream.
        self._inflater = self._new_inflater(raw=True)
        try:
            return self._inflater.decompress(data, max_length)
        except zlib.error as exc:
            raise self._corrupt() from exc

    def _gunzip(self, inflater: "zlib._Decompress", data: bytes, max_length: int) -> bytes:
        output = bytearray()
        data, self._after_member = self._after_member + data, b""
        while data and len(output) < max_length and not self._trailing_garbage:
            if inflater.eof:
                if len(data) < len(_GZIP_MAGIC):
                    self._after_member = data
                    break
                if not data.startswith(_GZIP_MAGIC):
                    # Padding or junk after the last member: ignored, as gzip(1) does.
                    self._trailing_garbage = True
                    break
                inflater = self._inflater = self._new_inflater()
            try:
                # With max_length, input that would inflate further stays in unconsumed_tail;
                # the caller stops as soon as the output reaches max_length.
                output += inflater.decompress(data, max_length - len(output))
            except zlib.error as exc:
                raise self._corrupt() from exc
            data = inflater.unused_data if inflater.eof else b""
        return bytes(output)

    def flush(self) -> bytes:
        return b"" if self._inflater is None else self._inflater.flush()

    def _corrupt(self) -> FetchError:
        return FetchError("connection_error", f"{self._host} sent a corrupt compressed body")
