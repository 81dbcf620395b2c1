"""JSON report bodies sent the way a client can take them: an ETag, 304 for a copy it already
holds (If-None-Match), gzip when it accepts gzip (a model report is ~220 kB, ~20 kB gzipped).

The compressed copy of a body is made once and kept (keyed by the body's digest), so a hot
report costs one gzip, not one per request.
"""
from __future__ import annotations

import gzip
import hashlib
from collections import OrderedDict
from threading import Lock

from starlette.requests import Request
from starlette.responses import Response

# Bodies under this size go as they are (gzip's header and a round trip through it cost more
# than the bytes saved; Starlette's GZipMiddleware uses 500 too).
MIN_GZIP_BYTES = 500
GZIP_LEVEL = 6  # zlib's default: within ~3 % of level 9's size at a third of its time
_KEPT = 256  # compressed bodies kept (a few MB: one per hot report)

_gzipped: OrderedDict[str, bytes] = OrderedDict()
_lock = Lock()


def etag_of(body: bytes) -> str:
    """The strong ETag of the uncompressed body (a quoted 16-byte BLAKE2b digest, hex)."""
    return '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'


def _gzip_of(tag: str, body: bytes) -> bytes:
    """`body` gzipped, made once per tag and kept (least recently used dropped first)."""
    with _lock:
        kept = _gzipped.get(tag)
        if kept is not None:
            _gzipped.move_to_end(tag)
            return kept
    packed = gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
    with _lock:
        _gzipped[tag] = packed
        while len(_gzipped) > _KEPT:
            _gzipped.popitem(last=False)
    return packed


def _accepts_gzip(request: Request) -> bool:
    """Whether Accept-Encoding names gzip (or *) without q=0."""
    for part in request.headers.get("accept-encoding", "").lower().split(","):
        name, _, params = part.strip().partition(";")
        if name.strip() in ("gzip", "*"):
            return params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def _matches(request: Request, tag: str) -> bool:
    """Whether If-None-Match names `tag` (either representation's, weak or strong) or is *."""
    header = request.headers.get("if-none-match")
    if not header:
        return False
    bare = tag.strip('"')
    for given in header.split(","):
        given = given.strip().removeprefix("W/").strip('"')
        if given == "*" or given.removesuffix("-gzip") == bare:
            return True
    return False


def json_response(request: Request, body: bytes) -> Response:
    """`body` (JSON bytes) with its ETag: 304 when the client holds it, gzipped when the
    client accepts gzip and the body is worth compressing."""
    tag = etag_of(body)
    headers = {"Vary": "Accept-Encoding", "Cache-Control": "no-cache"}
    wants_gzip = len(body) >= MIN_GZIP_BYTES and _accepts_gzip(request)
    sent_tag = tag[:-1] + '-gzip"' if wants_gzip else tag
    if _matches(request, tag):
        return Response(status_code=304, headers={**headers, "ETag": sent_tag})
    if wants_gzip:
        return Response(_gzip_of(tag, body), media_type="application/json",
                        headers={**headers, "ETag": sent_tag, "Content-Encoding": "gzip"})
    return Response(body, media_type="application/json", headers={**headers, "ETag": tag})
