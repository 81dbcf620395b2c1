"""A least-recently-used cache bounded by bytes, not by entries.

Its values are bytes by default (their `len` is their size); a cache of other values says how
to size them. Reports are kept as bytes (compact JSON for the API, pickled data for the pages:
web/reports.py), so the size of an entry is exact (`len`) and the cache can never hold more
than its budget however many distinct parameters clients send. A hit costs one decode (a few
milliseconds for the largest report); a miss builds the report (tens of milliseconds) and
serialises it once.

Misses are single-flight: while one thread builds a key, the others asking for it wait for
that build and share its bytes (or its exception) instead of building it again, so a cold page
under many connections costs one build, not one per connection.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar, cast

V = TypeVar("V")


class _Flight(Generic[V]):
    """One build in progress: waiters block on `done`, then read `value` or `error`."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: V | None = None
        self.error: BaseException | None = None

    def result(self) -> V:
        self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.value is not None
        return self.value


class ByteLRU(Generic[V]):
    """Maps keys to values, evicting the least recently used entries past `budget_bytes` of
    their sizes (`size_of`, bytes; default `len`, for bytes values).

    An entry larger than `largest_bytes` (default a quarter of the budget, so one huge value
    cannot flush everything else) is returned but not kept. Safe to share between the threads
    that run sync endpoints.
    """

    def __init__(self, budget_bytes: int, size_of: Callable[[V], int] | None = None,
                 largest_bytes: int | None = None) -> None:
        self.budget_bytes = budget_bytes
        self.largest_bytes = budget_bytes // 4 if largest_bytes is None else largest_bytes
        self.size_of = size_of or cast(Callable[[V], int], len)
        self.size_bytes = 0
        self.hits = 0
        self.misses = 0
        self.shared = 0  # misses answered by another thread's build
        self._entries: OrderedDict[Hashable, V] = OrderedDict()
        self._flights: dict[Hashable, _Flight[V]] = {}
        self._lock = threading.Lock()

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value under `key`, made (outside the lock, by one thread at a time) and kept
        when absent; a caller that finds the key being made waits for that build."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return found
            flight = self._flights.get(key)
            building = flight is None
            if flight is None:
                self.misses += 1
                flight = self._flights[key] = _Flight[V]()
            else:
                self.shared += 1
        if not building:
            return flight.result()
        try:
            flight.value = make()
        except BaseException as exc:
            flight.error = exc
            raise
        finally:
            with self._lock:
                del self._flights[key]
                if flight.value is not None:
                    self._keep(key, flight.value)
            flight.done.set()
        return flight.value

    def get(self, key: Hashable) -> V | None:
        """The value under `key` when kept (it becomes the most recent), else None; nothing
        is made."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def _keep(self, key: Hashable, value: V) -> None:
        """Store `value` and evict past the budget (the caller holds the lock)."""
        size = self.size_of(value)
        if size > self.largest_bytes:
            return
        if key not in self._entries:
            self._entries[key] = value
            self.size_bytes += size
        while self.size_bytes > self.budget_bytes and self._entries:
            _, dropped = self._entries.popitem(last=False)
            self.size_bytes -= self.size_of(dropped)

    def put(self, key: Hashable, value: V) -> None:
        """Keep `value` under `key` (an oversized value is not kept)."""
        with self._lock:
            self._keep(key, value)

    def pop(self, key: Hashable) -> None:
        """Forget the entry under `key`, if any."""
        with self._lock:
            dropped = self._entries.pop(key, None)
            if dropped is not None:
                self.size_bytes -= self.size_of(dropped)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
            self.size_bytes = 0

    def __len__(self) -> int:
        return len(self._entries)
