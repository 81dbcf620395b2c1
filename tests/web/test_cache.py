"""The report and page caches are bounded by bytes, whatever the parameters clients send."""
from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable

from tpscalc.web.cache import ByteLRU


def test_the_cache_never_holds_more_than_its_budget() -> None:
    cache = ByteLRU(budget_bytes=1000)
    for i in range(500):  # 500 distinct parameters, like 500 distinct contexts
        cache.get_or_make(("model", i), lambda i=i: bytes(200))
        assert cache.size_bytes <= 1000
    assert len(cache) == 5 and cache.misses == 500


def test_recently_used_entries_stay() -> None:
    cache = ByteLRU(budget_bytes=600)
    for key in "abc":
        cache.get_or_make(key, lambda: bytes(150))
    cache.get_or_make("a", lambda: b"x")  # a hit: "a" becomes the most recent
    cache.get_or_make("d", lambda: bytes(150))
    cache.get_or_make("e", lambda: bytes(150))  # over budget: "b", the least recent, goes
    made: list[str] = []
    cache.get_or_make("a", lambda: made.append("a") or b"")  # type: ignore[func-returns-value]
    cache.get_or_make("b", lambda: made.append("b") or bytes(150))  # type: ignore[func-returns-value]
    assert made == ["b"] and cache.hits == 2


def test_an_entry_over_a_quarter_of_the_budget_is_served_but_not_kept() -> None:
    cache = ByteLRU(budget_bytes=1000)
    assert cache.get_or_make("big", lambda: bytes(300)) == bytes(300)
    assert len(cache) == 0 and cache.size_bytes == 0


def _wait_for(condition: Callable[[], bool]) -> None:
    """Poll until `condition` holds (a thread has reached its wait); fail after 10 s."""
    for _ in range(10_000):
        if condition():
            return
        time.sleep(0.001)
    raise AssertionError("the threads never reached the cache")


def test_concurrent_misses_for_one_key_share_one_build() -> None:
    cache = ByteLRU(budget_bytes=10_000)
    release = threading.Event()
    builds: list[int] = []

    def make() -> bytes:
        builds.append(1)
        release.wait(10)
        return b"page"

    got: list[bytes] = []
    threads = [threading.Thread(target=lambda: got.append(cache.get_or_make("k", make)))
               for _ in range(20)]
    for t in threads:
        t.start()
    _wait_for(lambda: cache.misses + cache.shared == 20)  # every thread has asked
    release.set()
    for t in threads:
        t.join(10)
    assert builds == [1] and got == [b"page"] * 20
    assert cache.misses == 1 and cache.shared == 19 and cache.get_or_make("k", bytes) == b"page"


def test_a_failed_build_reaches_its_waiters_and_the_next_call_builds_again() -> None:
    cache = ByteLRU(budget_bytes=10_000)
    release = threading.Event()

    def broken() -> bytes:
        release.wait(10)
        raise ValueError("bad request")

    errors: list[str] = []

    def ask() -> None:
        try:
            cache.get_or_make("k", broken)
        except ValueError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=ask) for _ in range(5)]
    for t in threads:
        t.start()
    _wait_for(lambda: cache.misses + cache.shared == 5)
    release.set()
    for t in threads:
        t.join(10)
    assert errors == ["bad request"] * 5 and len(cache) == 0
    assert cache.get_or_make("k", lambda: b"ok") == b"ok" and cache.misses == 2


def test_other_keys_do_not_wait_for_a_build() -> None:
    cache = ByteLRU(budget_bytes=10_000)
    release = threading.Event()
    slow = threading.Thread(target=lambda: cache.get_or_make("slow", lambda: release.wait(10)
                                                             and b"s" or b""))
    slow.start()
    _wait_for(lambda: cache.misses == 1)
    assert cache.get_or_make("fast", lambda: b"f") == b"f"  # answered while "slow" builds
    release.set()
    slow.join(10)
    assert cache.get_or_make("slow", bytes) == b"s"


def test_a_serving_worker_warms_up_with_one_report() -> None:
    from tpscalc.web import reports
    from tpscalc.web.app import warm_up

    reports.clear_cache()
    warm_up()
    assert len(reports.CACHE) == 1 and reports.CACHE.misses >= 1


def test_a_large_body_keeps_its_tag_within_a_byte_budget() -> None:
    from tpscalc.web import conditional

    bodies = [bytes([i]) * 2**20 for i in range(20)]  # 20 MiB of distinct large bodies
    tags = [conditional.etag_of(b) for b in bodies]
    assert len(set(tags)) == 20
    # the kept tag is the body's own: the same bytes in another object get the same tag
    assert [conditional.etag_of(bytes(bytearray(b))) for b in bodies] == tags
    assert [conditional.etag_of(b) for b in bodies] == tags
    assert 0 < conditional._TAGGED.size_bytes <= conditional.TAGGED_BYTES


def test_a_settled_worker_leaves_its_long_lived_objects_out_of_the_collector() -> None:
    """web.app.settle_collector, in a process of its own (it changes the process's collector):
    what exists is frozen, and young objects are collected less often than CPython's 700."""
    code = ("import gc\n"
            "from tpscalc.web.app import GC_YOUNG_THRESHOLD, settle_collector\n"
            "before = gc.get_freeze_count()\n"
            "settle_collector()\n"
            "young = gc.get_threshold()[0]\n"
            "print(before, gc.get_freeze_count() > 1000, young == GC_YOUNG_THRESHOLD > 700)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "True", "True"]


def test_a_cache_of_other_values_sizes_them_by_its_rule_and_bound() -> None:
    """ByteLRU over (body, tag) pairs, as conditional._TAGGED: sized by the body, an entry kept
    up to the whole budget (the default bound, a quarter, would refuse it)."""
    pairs: ByteLRU[tuple[bytes, str]] = ByteLRU(1000, lambda held: len(held[0]),
                                                 largest_bytes=1000)
    assert pairs.get_or_make("a", lambda: (b"x" * 900, "t")) == (b"x" * 900, "t")
    assert len(pairs) == 1 and pairs.size_bytes == 900
    pairs.put("b", (b"y" * 200, "u"))  # over the budget: the least recent goes
    assert len(pairs) == 1 and pairs.size_bytes == 200
    quarter: ByteLRU[tuple[bytes, str]] = ByteLRU(1000, lambda held: len(held[0]))
    quarter.put("a", (b"x" * 900, "t"))
    assert len(quarter) == 0


def test_a_page_keeps_its_report_as_data_and_the_api_as_json_each_reusing_the_other(
        client, monkeypatch) -> None:
    """A page never encodes its report as JSON: it keeps the data pickled (sized by its bytes),
    the API encodes that data without a build, a page after the API reads the API's JSON, and
    every answer is the same as from a cold build."""
    from tpscalc.web import page_cache, reports

    real = reports.model_builder()
    builds: list[str] = []

    def counted(model, request):  # type: ignore[no-untyped-def]
        builds.append(model.name)
        return real(model, request)

    monkeypatch.setattr(reports, "model_builder", lambda: counted)
    page_path, api_path = "/en/models/starcoder-2-15b", "/api/v1/models/starcoder-2-15b"
    reports.clear_cache()
    cold_page = client.get(page_path).text
    assert len(builds) == 1 and len(reports.CACHE) == 1
    (key,) = reports.CACHE._entries
    assert key[-1] == reports.PICKLED and reports.CACHE.size_bytes == len(reports.CACHE.get(key))
    from_data = client.get(api_path).content  # encoded from the page's data
    page_cache.clear()
    assert len(builds) == 1 and client.get(page_path).text == cold_page  # unpickled
    reports.clear_cache()
    assert client.get(api_path).content == from_data and len(builds) == 2  # a cold API build
    assert client.get(page_path).text == cold_page and len(builds) == 2  # from the API's JSON
