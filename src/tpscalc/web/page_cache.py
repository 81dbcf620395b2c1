"""Rendered pages kept gzip-compressed, answered with an ETag, 304 when the client has them.

A page is rendered once per distinct request (language, slug, options, page number) and kept
compressed in a byte-bounded cache; later requests cost a lookup. Clients that accept gzip (all
browsers) get the stored bytes; others get them decompressed. The ETag is the hash of the
compressed bytes, so `If-None-Match` revalidation answers 304 with no body.
"""
from __future__ import annotations

import gzip
from collections.abc import Callable, Hashable

from fastapi import Request, Response

from tpscalc.web.cache import ByteLRU
from tpscalc.web.conditional import GZIP_LEVEL, digest_etag

PAGE_CACHE_BYTES = 32 * 2**20  # compressed pages: ~15 kB each, so thousands fit
MAX_AGE_S = 300  # browsers and proxies may reuse a page for five minutes, then revalidate
PAGES: ByteLRU[bytes] = ByteLRU(PAGE_CACHE_BYTES)


def cached_html(request: Request, key: Hashable, render: Callable[[], str]) -> Response:
    """The page under `key` (rendered by `render` when absent) as an HTML response."""
    packed = PAGES.get_or_make(key, lambda: gzip.compress(render().encode(), GZIP_LEVEL, mtime=0))
    etag = digest_etag(packed)
    headers = {"ETag": etag, "Cache-Control": f"public, max-age={MAX_AGE_S}",
               "Vary": "Accept-Encoding"}
    if etag in (request.headers.get("if-none-match") or ""):
        return Response(status_code=304, headers=headers)
    if "gzip" in (request.headers.get("accept-encoding") or ""):
        return Response(packed, media_type="text/html; charset=utf-8",
                        headers={**headers, "Content-Encoding": "gzip"})
    return Response(gzip.decompress(packed), media_type="text/html; charset=utf-8",
                    headers=headers)


def clear() -> None:
    """Forget every page (tests; after the catalog changes)."""
    PAGES.clear()
