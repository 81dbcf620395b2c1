"""The report and page caches are bounded by bytes, whatever the parameters clients send."""
from __future__ import annotations

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
