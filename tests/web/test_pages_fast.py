"""Light pages: a paginated table with working links, section navigation, gzip, ETag and 304."""
from __future__ import annotations

import re

from tpscalc.report.request import ROWS_PER_PAGE


def rows_on(html: str) -> int:
    return len(re.findall(r'<tr class="fit-', html))


def test_the_table_is_paginated_and_the_links_work(client, many_cards: int) -> None:
    first = client.get("/en/models/starcoder-2-15b?context=8192").text
    assert rows_on(first) == ROWS_PER_PAGE and "Page 1 of 3" in first
    nxt = re.search(r'href="([^"]+)" rel="next"', first)
    assert nxt and "page=2" in nxt.group(1) and "context=8192" in nxt.group(1)
    second = client.get(nxt.group(1).replace("&amp;", "&")).text
    assert "Page 2 of 3" in second and rows_on(second) == ROWS_PER_PAGE
    last = client.get("/en/models/starcoder-2-15b?context=8192&page=3").text
    assert rows_on(last) == many_cards - 2 * ROWS_PER_PAGE and 'rel="next"' not in last
    assert "Page 3 of 3" in client.get("/en/models/starcoder-2-15b?context=8192&page=9").text


def test_the_api_gives_every_row_and_takes_no_page(client, many_cards: int) -> None:
    body = client.get("/api/v1/models/starcoder-2-15b").json()
    assert len(body["rows"]) == many_cards
    assert client.get("/api/v1/models/starcoder-2-15b?page=2").status_code == 400


def test_bad_page_is_a_400(client) -> None:
    r = client.get("/en/models/starcoder-2-15b?page=0")
    assert r.status_code == 400


def test_section_navigation_reaches_every_section(client) -> None:
    html = client.get("/en/models/starcoder-2-15b").text
    nav = html.split('<nav class="sections"', 1)[1].split("</nav>", 1)[0]
    for anchor in re.findall(r'href="#([a-z]+)"', nav):
        assert f'id="{anchor}"' in html


def test_pages_are_gzipped_with_an_etag_and_revalidate(client) -> None:
    r = client.get("/en/models/starcoder-2-15b", headers={"Accept-Encoding": "gzip"})
    assert r.headers["content-encoding"] == "gzip" and r.headers["etag"]
    assert "max-age" in r.headers["cache-control"]
    again = client.get("/en/models/starcoder-2-15b", headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    plain = client.get("/en/models/starcoder-2-15b", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.text == r.text
