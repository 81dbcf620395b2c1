"""JSON report bodies sent the way a client can take them: an ETag, 304 for a copy it already
holds (If-None-Match), gzip when it accepts gzip (a model report is ~220 kB, ~20 kB gzipped).

The compressed copy of a body is made once and kept (keyed by the body's digest), so a hot
report costs one gzip, not one per request; made single-flight (web/cache.py), so the requests
that waited on a cold report's build do not each compress it when it lands (a rig report is
~1.2 MB: 200 of them at once was seconds of CPU, and 503s).
"""
from __future__ import annotations

import gzip
import hashlib

from starlette.requests import Request
from starlette.responses import Response

from tpscalc.web.cache import ByteLRU

# Bodies under this size go as they are (gzip's header and a round trip through it cost more
# than the bytes saved; Starlette's GZipMiddleware uses 500 too).
MIN_GZIP_BYTES = 500
GZIP_LEVEL = 6  # zlib's default: within ~3 % of level 9's size at a third of its time
KEPT_BYTES = 16 * 2**20  # compressed bodies kept: ~20-150 kB each, one per hot report
_GZIPPED: ByteLRU[bytes] = ByteLRU(KEPT_BYTES)


# A cached report is answered as the same bytes object on every hit: its tag is kept beside a
# reference to it, keyed by its id (the reference keeps the id from being reused), so a hit
# does not hash the body again (4 ms for a 1.2 MB rig report, the larger part of a hit's cost
# under load). Only bodies worth it are kept, within a byte budget (what the references may
# keep alive after the report cache dropped them), any body up to the whole budget.
TAGGED_MIN_BYTES = 64 * 2**10
TAGGED_BYTES = 16 * 2**20
_TAGGED: ByteLRU[tuple[bytes, str]] = ByteLRU(TAGGED_BYTES, lambda held: len(held[0]),
                                              largest_bytes=TAGGED_BYTES)


def etag_of(body: bytes) -> str:
    """The strong ETag of the uncompressed body (a quoted 16-byte BLAKE2b digest, hex)."""
    if len(body) < TAGGED_MIN_BYTES:
        return digest_etag(body)
    held = _TAGGED.get_or_make(id(body), lambda: (body, digest_etag(body)))
    return held[1] if held[0] is body else digest_etag(body)


def digest_etag(body: bytes) -> str:
    """A strong ETag of `body`: its quoted 16-byte BLAKE2b digest, hex (every tag the site
    sends, pages and JSON reports alike)."""
    return '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'


def _gzip_of(tag: str, body: bytes) -> bytes:
    """`body` gzipped, made once per tag and kept (least recently used dropped first)."""
    return _GZIPPED.get_or_make(tag, lambda: gzip.compress(body, compresslevel=GZIP_LEVEL,
                                                           mtime=0))


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
