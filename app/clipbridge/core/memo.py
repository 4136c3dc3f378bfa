"""The translation memo: an LRU keyed by a digest of the normalized request, bounded in bytes and in entries.

Keys are SHA-256 digests (32 bytes), never the request itself; a request whose normalized form is larger than
MEMO_MAX_KEY_BYTES (a model-form source carries the whole model) is not memoized at all, and neither is an
answer larger than a quarter of the byte bound. So what the memo keeps after the answers is at most
`max_bytes` (accounted: digest + response text + a fixed per-entry overhead) whatever the requests were.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable

MEMO_MAX_KEY_BYTES = 64 * 1024  # larger normalized requests are translated every time
ENTRY_OVERHEAD = 200  # bytes per entry beyond digest and text: the dict slot, the list node, the objects' heads


class Memo:
    """Thread-safe LRU of str answers (sync routes run on a thread pool)."""

    def __init__(self, max_bytes: int, max_entries: int) -> None:
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.size = 0  # accounted bytes held now
        self._items: OrderedDict[bytes, str] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = self.skipped = 0

    def __len__(self) -> int:
        return len(self._items)

    @staticmethod
    def cost(text: str) -> int:
        """Accounted bytes of one entry: the digest, the text object, the bookkeeping."""
        return 32 + sys.getsizeof(text) + ENTRY_OVERHEAD

    def get_or_compute(self, key: str, compute: Callable[[str], str]) -> str:
        """The memoized answer for `key`, or compute(key), kept when it fits the bounds."""
        if len(key) > MEMO_MAX_KEY_BYTES or self.max_bytes == 0 or self.max_entries == 0:
            self.skipped += 1
            return compute(key)
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            text = self._items.get(digest)
            if text is not None:
                self._items.move_to_end(digest)
                self.hits += 1
                return text
        text = compute(key)  # outside the lock: a translation may take milliseconds
        cost = self.cost(text)
        with self._lock:
            self.misses += 1
            if cost * 4 > self.max_bytes or digest in self._items:
                return text
            self._items[digest] = text
            self.size += cost
            while self.size > self.max_bytes or len(self._items) > self.max_entries:
                _, old = self._items.popitem(last=False)
                self.size -= self.cost(old)
        return text

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.size = 0
