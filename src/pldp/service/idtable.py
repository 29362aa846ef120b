"""A hash table of 16-byte report ids and their ``seq``: the index a writer searches for retries.

Report ids are random (or chosen by hostile clients); the table must answer "is this id stored,
and at which ``seq``?" for a batch of ids at once, in O(1) per id whatever the number stored
(:mod:`pldp.service.seen` keeps two of them per campaign).

* **Layout.** The ids and their ``seq`` are kept in arrival order in two dense arrays (24 bytes
  per id). The table has ``2^b`` buckets of :data:`BUCKET` slots; a slot holds a one-byte tag
  (0: empty) and the position of its id in the dense arrays (4 bytes). An id goes to the first
  slot free in its home bucket or, when that is full, in the next bucket (and so on: linear
  probing by buckets; nothing is ever deleted, so a bucket that is not full ends every search).
* **Lookup.** For every id at once (numpy): its hash gives its home bucket and its tag; the
  bucket's 16 tags are compared at once, and only the slots whose tag matches (the id itself, and
  for about one id in 14 another one) are compared in full, 16 bytes. A second round, for the ids
  whose home bucket is full, is rare. A lookup thus reads one or two cache lines per id.
* **Hash.** Report ids are chosen by clients, so the hash is keyed: a multilinear hash of the
  id's four 32-bit words, ``h = k0 + k1 w1 + ... + k4 w4 mod 2^64`` with random 64-bit keys
  drawn per index (Dietzfelbinger, "Universal hashing and k-wise independent random variables
  via integer arithmetic without primes", STACS 1996); the bucket is taken from the high bits of
  ``h``, the tag from the 8 bits below (made odd: 0 marks an empty slot). Without the keys, ids
  cannot be made to share a bucket. ``h`` then goes through MurmurHash3's finalizer (fmix64), a
  fixed bijection of 64-bit words, which keeps the keyed family's collisions and mixes its high
  bits: without it, ids ``0, 1, 2, ...`` in one word land on ``k4 i`` modulo 2^64, whose high
  bits cluster for keys near a fraction with a small denominator (14 % of the buckets overflowed
  for one key drawn in CI).
* **Growth without a pause.** At half load a table twice as large is started. Each later call to
  :meth:`SeenIds.maintain` (which the writer makes after releasing the write lock) moves
  :data:`MOVE_PER_ID` ids to it for each id added since, so the move is done by the time the old
  table is 5/8 full, and then replaces it. No call ever rehashes every id: the cost of growing
  is spread over the adds, O(1) per id. An add that finds no room (a very large batch, or no
  maintenance) finishes the move itself.
* **Memory.** 24 bytes per id in the dense arrays plus 5.3 bytes per slot, with 2 to 4 slots
  per id: 35 to 45 bytes per stored id (42 at 10^7), and up to twice that while a larger table
  is being filled.
"""

from __future__ import annotations

import os
import struct

import numpy as np

__all__ = ["BUCKET", "FEW", "MOVE_PER_ID", "IdTable"]

#: Slots per bucket: 16 one-byte tags are one comparison per id.
BUCKET = 16
#: Ids moved to the larger table per id added while one is being filled (see module doc).
MOVE_PER_ID = 4
#: Fewest buckets (2^10: 16,384 slots, 82 KB).
_MIN_BITS = 10
#: Lookups and adds of at most this many ids use scalar code, which costs less than numpy's per-call overhead.
FEW = 4
_M64 = (1 << 64) - 1
#: MurmurHash3's 64-bit finalizer (fmix64): xor-shift and multiply rounds, then a last xor-shift.
_FMIX = ((33, 0xFF51AFD7ED558CCD), (33, 0xC4CEB9FE1A85EC53))
_FMIX_LAST = 33
_WORDS = struct.Struct("=4I")  # an id's four 32-bit words, as numpy sees them in a uint32 view
_PAIR = struct.Struct("=2Q")  # an id as the two uint64 of its row in the dense array


def _bits_for(n: int) -> int:
    """Bucket bits of a table that holds ``n`` ids at most half full."""
    bits = _MIN_BITS
    while (BUCKET << bits) < 2 * n:
        bits += 1
    return bits


class _Table:
    """Buckets of :data:`BUCKET` slots: a tag (uint8, 0 empty) and a position (int32) per slot."""

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.mask = (1 << bits) - 1
        self.tags = np.zeros((1 << bits, BUCKET), np.uint8)
        self.slots = np.zeros((1 << bits, BUCKET), np.int32)
        self.fill = np.zeros(1 << bits, np.uint8)  # slots taken in each bucket (left to right)
        self.claim = np.zeros(1 << bits, np.int32)  # scratch of place(): which entry a bucket takes this round

    @property
    def size(self) -> int:
        return BUCKET << self.bits

    @property
    def nbytes(self) -> int:
        return self.tags.nbytes + self.slots.nbytes + self.fill.nbytes + self.claim.nbytes

    def home(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The home bucket and the tag (odd: never 0, the empty slot's) of hashes ``h``."""
        bucket = (h >> np.uint64(64 - self.bits)).astype(np.intp)
        tag = (h >> np.uint64(56 - self.bits)).astype(np.uint8)  # the 8 bits below the bucket's
        return bucket, tag | np.uint8(1)

    def home_one(self, h: int) -> tuple[int, int]:
        return h >> (64 - self.bits), ((h >> (56 - self.bits)) & 255) | 1

    def place(self, h: np.ndarray, where: np.ndarray) -> None:
        """Insert the ids of hashes ``h`` at positions ``where`` (ids not in the table).

        In rounds: every entry writes its number into its bucket's ``claim``, and the entry whose
        number stays there takes the bucket's next free slot (one per bucket per round: no sort);
        an entry whose bucket is full moves on to the next bucket.
        """
        bucket, tag = self.home(h)
        entry = np.arange(bucket.size, dtype=np.int32)
        while bucket.size:
            taken = self.fill[bucket]
            full = taken == BUCKET
            self.claim[bucket] = entry
            won = (self.claim[bucket] == entry) & ~full
            b, c = bucket[won], taken[won]
            self.tags[b, c], self.slots[b, c], self.fill[b] = tag[won], where[won], c + 1
            rest = ~won
            bucket = np.where(full, (bucket + 1) & self.mask, bucket)[rest]
            tag, where, entry = tag[rest], where[rest], entry[rest]

    def place_one(self, h: int, where: int) -> None:
        bucket, tag = self.home_one(h)
        while self.fill[bucket] == BUCKET:
            bucket = (bucket + 1) & self.mask
        at = int(self.fill[bucket])
        self.tags[bucket, at], self.slots[bucket, at] = tag, where
        self.fill[bucket] = at + 1

    def lookup(self, h: np.ndarray, q: np.ndarray, ids: np.ndarray, seqs: np.ndarray) -> np.ndarray:
        """The ``seq`` of each id of ``q`` (rows of two uint64, hashes ``h``), -1 if absent."""
        bucket, tag = self.home(h)
        out = np.full(len(q), -1, dtype=np.int64)
        rows = np.arange(len(q))
        while rows.size:
            i, col = np.nonzero(self.tags[bucket] == tag[:, None])
            if i.size:
                at = self.slots[bucket[i], col]
                same = (ids[at] == q[rows[i]]).all(axis=1)
                out[rows[i[same]]] = seqs[at[same]]
            full = self.fill[bucket] == BUCKET  # a full bucket: the id may be further on
            if not full.any():
                break
            on = full & (out[rows] < 0)
            rows, bucket, tag = rows[on], (bucket[on] + 1) & self.mask, tag[on]
        return out

    def lookup_one(self, h: int, rid: bytes, ids: np.ndarray, seqs: np.ndarray) -> int:
        bucket, tag = self.home_one(h)
        while True:
            row = self.tags[bucket].tobytes()
            col = row.find(tag)
            while col >= 0:
                at = int(self.slots[bucket, col])
                if ids[at].tobytes() == rid:
                    return int(seqs[at])
                col = row.find(tag, col + 1)
            if self.fill[bucket] < BUCKET:
                return -1
            bucket = (bucket + 1) & self.mask


class IdTable:
    """A hash table of report ids and their ``seq``, growing without a pause (see module doc).

    Parameters
    ----------
    expected : int
        How many ids the index will hold soon (it is sized for them, so that loading them
        moves nothing).

    ``last`` is the largest ``seq`` added (0 for none).
    """

    def __init__(self, expected: int = 0) -> None:
        self._keys = np.frombuffer(os.urandom(40), dtype=np.uint64) | np.uint64(1)
        self._int_keys = [int(k) for k in self._keys]
        self._table = _Table(_bits_for(expected))
        self._ids, self._seqs = self._dense(self._table)
        self._n = 0
        self._next: _Table | None = None  # the larger table being filled, with its dense arrays
        self._next_ids, self._next_seqs = self._ids[:0], self._seqs[:0]
        self._moved = 0  # ids of the dense arrays already in the larger table
        self._owed = 0  # ids to move at the next maintain()
        self.last = 0

    @staticmethod
    def _dense(table: _Table) -> tuple[np.ndarray, np.ndarray]:
        """Dense arrays with room for a table filled to 3/4 (np.empty: the pages not written
        take no memory)."""
        room = table.size * 3 // 4
        return np.empty((room, 2), dtype=np.uint64), np.empty(room, dtype=np.int64)

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        """Bytes the index holds in memory (the dense arrays' rows in use, the tables)."""
        held = self._n * (self._ids.itemsize * 2 + self._seqs.itemsize) + self._table.nbytes
        if self._next is not None:
            held += self._moved * (self._ids.itemsize * 2 + self._seqs.itemsize) + self._next.nbytes
        return held

    # ------------------------------------------------------------------ hashing
    def _hash(self, rows: np.ndarray) -> np.ndarray:
        """The keyed hash of ids given as rows of two uint64 (see module doc)."""
        words = rows.view(np.uint32).astype(np.uint64)
        h = words @ self._keys[1:] + self._keys[0]  # integer matmul: no BLAS, wraps modulo 2^64
        for shift, mult in _FMIX:  # a fixed bijection: the same collisions, its high bits mixed
            h ^= h >> np.uint64(shift)
            h *= np.uint64(mult)
        return h ^ (h >> np.uint64(_FMIX_LAST))

    def _hash_one(self, rid: bytes) -> int:
        k = self._int_keys
        w = _WORDS.unpack(rid)
        h = (k[0] + k[1] * w[0] + k[2] * w[1] + k[3] * w[2] + k[4] * w[3]) & _M64
        for shift, mult in _FMIX:
            h = ((h ^ (h >> shift)) * mult) & _M64
        return h ^ (h >> _FMIX_LAST)

    # ------------------------------------------------------------------ lookups
    def find(self, ids: bytes) -> np.ndarray:
        """The ``seq`` of each of ``ids`` (concatenated 16-byte ids), -1 where it is not stored."""
        m = len(ids) // 16
        if self._n == 0:
            return np.full(m, -1, dtype=np.int64)
        if m <= FEW:
            return np.array(
                [
                    self._table.lookup_one(self._hash_one(rid), rid, self._ids, self._seqs)
                    for rid in (ids[16 * i : 16 * i + 16] for i in range(m))
                ],
                dtype=np.int64,
            )
        q = np.frombuffer(ids, dtype=np.uint64).reshape(m, 2)
        return self._table.lookup(self._hash(q), q, self._ids, self._seqs)

    # ------------------------------------------------------------------ adding
    def add(self, ids: bytes, seqs: np.ndarray | range) -> None:
        """Add ids not stored before (concatenated 16-byte ids, distinct), with their ``seq``
        (all above :attr:`last`)."""
        m = len(ids) // 16
        if m == 0:
            return
        while self._n + m > len(self._seqs):  # no room: finish (or make) the larger table now
            if self._next is None:
                self._grow(self._n + m)
            self._move(self._n)
        n = self._n
        if m <= FEW:  # a single report's request: no numpy call per id
            for i in range(m):
                rid = ids[16 * i : 16 * i + 16]
                self._ids[n + i], self._seqs[n + i] = _PAIR.unpack(rid), seqs[i]
                self._table.place_one(self._hash_one(rid), n + i)
            top = max(int(seqs[i]) for i in range(m))
        else:
            rows, numbers = np.frombuffer(ids, dtype=np.uint64).reshape(m, 2), np.asarray(seqs, dtype=np.int64)
            self._ids[n : n + m], self._seqs[n : n + m] = rows, numbers
            self._table.place(self._hash(rows), np.arange(n, n + m, dtype=np.int32))
            top = int(numbers.max())
        self._n += m
        self.last = max(self.last, top)
        if self._next is None and 2 * self._n > self._table.size:
            self._grow(self._n)
        if self._next is not None:
            self._owed += MOVE_PER_ID * m

    def append(self, ids: bytes, first: int) -> None:
        """:meth:`add` ids numbered ``first``, ``first + 1``, ... (a job's new reports)."""
        m = len(ids) // 16
        self.add(ids, range(first, first + m) if m <= FEW else np.arange(first, first + m, dtype=np.int64))

    def maintain(self) -> None:
        """Move the ids owed to the larger table, if one is being filled (see module doc); the
        writer calls this outside its write lock."""
        if self._next is not None:
            self._move(self._owed)

    def _grow(self, n: int) -> None:
        """Start a table with room for twice ``n`` ids (at most half full)."""
        self._next = _Table(max(self._table.bits + 1, _bits_for(2 * n)))
        self._next_ids, self._next_seqs = self._dense(self._next)
        self._moved = self._owed = 0

    def _move(self, count: int) -> None:
        """Move up to ``count`` ids to the larger table; replace the table when all are there."""
        assert self._next is not None
        a, b = self._moved, min(self._n, self._moved + max(count, 0))
        if b > a:
            self._next_ids[a:b], self._next_seqs[a:b] = self._ids[a:b], self._seqs[a:b]
            self._next.place(self._hash(self._ids[a:b]), np.arange(a, b, dtype=np.int32))
            self._moved = b
        self._owed = max(0, self._owed - (b - a))
        if self._moved == self._n:
            self._table, self._ids, self._seqs = self._next, self._next_ids, self._next_seqs
            self._next, self._next_ids, self._next_seqs = None, self._ids[:0], self._seqs[:0]
            self._moved = self._owed = 0

    @property
    def moving(self) -> bool:
        """Whether a larger table is being filled."""
        return self._next is not None

    def rows(self) -> bytes:
        """Every id, concatenated, in the order added."""
        return self._ids[: self._n].tobytes()

    def seqs(self) -> np.ndarray:
        """Every id's ``seq``, in the order added."""
        return self._seqs[: self._n]
