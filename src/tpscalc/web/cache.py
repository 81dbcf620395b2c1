"""A least-recently-used cache bounded by bytes, not by entries.

Reports are kept as their compact JSON bytes, so the size of an entry is exact (`len`) and the
cache can never hold more than its budget however many distinct parameters clients send. A hit
costs one `json.loads` (a few milliseconds for the largest report); a miss builds the report
(tens of milliseconds) and serialises it once.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable


class ByteLRU:
    """Maps keys to bytes, evicting the least recently used entries past `budget_bytes`.

    An entry larger than a quarter of the budget is returned but not kept, so one huge value
    cannot flush everything else. Safe to share between the threads that run sync endpoints.
    """

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self.size_bytes = 0
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_make(self, key: Hashable, make: Callable[[], bytes]) -> bytes:
        """The bytes under `key`, made (outside the lock) and kept when absent."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return found
            self.misses += 1
        value = make()
        if len(value) <= self.budget_bytes // 4:
            with self._lock:
                if key not in self._entries:
                    self._entries[key] = value
                    self.size_bytes += len(value)
                while self.size_bytes > self.budget_bytes and self._entries:
                    _, dropped = self._entries.popitem(last=False)
                    self.size_bytes -= len(dropped)
        return value

    def put(self, key: Hashable, value: bytes) -> None:
        """Keep `value` under `key` (an oversized value is not kept)."""
        self.get_or_make(key, lambda: value)

    def pop(self, key: Hashable) -> None:
        """Forget the entry under `key`, if any."""
        with self._lock:
            dropped = self._entries.pop(key, None)
            if dropped is not None:
                self.size_bytes -= len(dropped)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
            self.size_bytes = 0

    def __len__(self) -> int:
        return len(self._entries)
