"""Mergeable tallies: the sufficient statistics a server keeps.

Every tally in pldp (:class:`Tally` here; the protocols' ``GroupedTally``, ``FEBSFTally`` and
``MPLDPTally``) shares the interface of :class:`BaseTally`: the number of reports ``n``, the
:mod:`fingerprint <pldp.fingerprint>` of the mechanism or protocol that made it, ``merge`` (also
``+``) with a tally of other users of the *same* mechanism, and versioned ``to_dict`` /
``from_dict``. Tallies of disjoint sets of users merge by addition, so a collection can be
aggregated on many machines and combined later; a tally of another mechanism is refused.

A :class:`Tally` holds ``n`` and one count per item. For direct-encoding mechanisms (KRR, URR,
IPRR) the count of item ``y`` is the number of reports equal to ``y``; for unary encodings it is
the number of reports whose bit ``y`` is set.

Unary tallies made from reports (``tally``, the collector's decode, report files) also hold what
detection needs (:mod:`pldp.estimation.detect`): ``ones``, the histogram of the number of ones per
report, and ``tails``, the per-bit counts of the reports whose number of ones lies in the oracle's
*tail region* (:func:`pldp.estimation.detect.tally_region`: the flag region and the upper tail
of probability below 0.05 under every item and level, a few percent of honest reports; the joint
test of detection drops the reports at a suspect count from them). Both
merge by addition; a tally drawn at count level (``simulate``), or merged with one, has neither.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np

from pldp._validation import as_counts, check_int
from pldp.bitcount import group_bit_counts, row_ones
from pldp.errors import TallyError
from pldp.fingerprint import is_fingerprint

__all__ = ["TALLY_FORMAT", "BaseTally", "Tally", "source_fingerprint", "unary_report_stats"]

#: Version tag written by :meth:`Tally.to_dict` (``"pldp.tally/1"``, without a fingerprint, is still read).
TALLY_FORMAT = "pldp.tally/2"

#: Report families a :class:`Tally` can hold.
TALLY_KINDS = ("direct", "unary")


def unary_report_stats(rows: np.ndarray, nbits: int, region: np.ndarray) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """``(ones, tails)`` of packed unary reports: the histogram of their numbers of ones (length
    ``nbits + 1``) and, for each number of ones ``s`` with ``region[s]`` true, the per-bit counts of
    the reports with ``s`` ones (only the ``s`` some report has)."""
    ones = row_ones(rows)
    hist = np.bincount(ones, minlength=nbits + 1)[: nbits + 1]
    tails: dict[int, np.ndarray] = {}
    in_tail = region[np.minimum(ones, nbits)]
    if in_tail.any():
        sel_ones = ones[in_tail]
        present = np.flatnonzero(np.bincount(sel_ones))  # the numbers of ones some tail report has
        group = np.zeros(present[-1] + 1, dtype=np.int64)
        group[present] = np.arange(present.size)
        counts = group_bit_counts(rows[in_tail], group[sel_ones], present.size)[:, :nbits]
        tails = {int(s): counts[i] for i, s in enumerate(present)}
    return hist, tails


def _same_array(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


def _add_tails(a: dict[int, np.ndarray], b: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    out = dict(a)
    for s, v in b.items():
        out[s] = out[s] + v if s in out else v
    return out


def source_fingerprint(source: Any) -> str | None:
    """The fingerprint ``source`` stands for: a mechanism or protocol, a fingerprint string, or None."""
    if source is None or isinstance(source, str):
        return source
    fp = getattr(source, "fingerprint", None)
    if not isinstance(fp, str):
        raise TallyError(f"expected a pldp mechanism or protocol (or a fingerprint), got {type(source).__name__}")
    return fp


class BaseTally:
    """What every tally offers: ``n``, ``fingerprint``, ``merge`` / ``+``, ``to_dict`` / ``from_dict``.

    ``n`` (the number of reports) is a field or a property of each subclass.

    ``fingerprint`` names the exact mechanism or protocol whose reports were tallied (``None``
    for a tally built by hand from counts of unknown origin, which no check can protect).
    Subclasses are frozen dataclasses that implement :meth:`_merge`, :meth:`_fields` and
    :meth:`_from_fields`.
    """

    #: Version tag of :meth:`to_dict`.
    FORMAT: ClassVar[str] = ""
    #: Older tags :meth:`from_dict` still reads (their tallies carry no fingerprint).
    LEGACY_FORMATS: ClassVar[tuple[str, ...]] = ()
    #: Fingerprint of the mechanism or protocol that made the tally.
    fingerprint: str | None

    # ---------------------------------------------------------------------- merging
    def merge(self, other: Self) -> Self:
        """Combine with a tally of other users of the same mechanism or protocol.

        Raises
        ------
        TallyError
            ``other`` is another kind of tally, or was made by another mechanism (fingerprint).
        """
        if type(other) is not type(self):
            raise TallyError(f"can only merge a {type(self).__name__} with another, got {type(other).__name__}")
        if other.fingerprint != self.fingerprint:
            raise TallyError(
                f"cannot merge tallies of different mechanisms or protocols (fingerprints {self.fingerprint} "
                f"and {other.fingerprint})"
            )
        return self._merge(other)

    def __add__(self, other: Self) -> Self:
        return self.merge(other)

    def _merge(self, other: Self) -> Self:
        raise NotImplementedError

    def check_source(self, source: Any) -> None:
        """Raise :class:`~pldp.errors.TallyError` unless this tally was made by ``source``.

        ``source`` is a mechanism, a protocol or a fingerprint. A tally without a fingerprint
        (built by hand) passes.
        """
        expected = source_fingerprint(source)
        if self.fingerprint is not None and expected is not None and self.fingerprint != expected:
            what = repr(source) if not isinstance(source, str) else f"fingerprint {expected}"
            raise TallyError(
                f"the tally does not come from {what}: another mechanism or protocol made it (fingerprint "
                f"{self.fingerprint}, expected {expected}); estimate, merge or load it with the one that made it"
            )

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dictionary (see :meth:`from_dict`)."""
        return {"format": self.FORMAT, "fingerprint": self.fingerprint, **self._fields()}

    def _fields(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: Any = None) -> Self:
        """Rebuild a tally written by :meth:`to_dict`.

        Parameters
        ----------
        data : dict
            The dictionary; its format tag is checked.
        source : mechanism, protocol or str, optional
            What the tally must come from: refused (:class:`~pldp.errors.TallyError`) if its
            fingerprint differs.
        """
        if not isinstance(data, dict):
            raise TallyError(f"expected a dict, got {type(data).__name__}")
        fmt = data.get("format")
        if fmt != cls.FORMAT and fmt not in cls.LEGACY_FORMATS:
            raise TallyError(f"unknown tally format {fmt!r}; this version reads {cls.FORMAT!r}")
        fp = data.get("fingerprint")
        if fp is not None and not is_fingerprint(fp):
            raise TallyError(f"malformed fingerprint {fp!r}: expected 32 lower-case hex digits")
        try:
            tally = cls._from_fields(data, fp)
        except KeyError as exc:
            raise TallyError(f"tally dict lacks the field {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            if isinstance(exc, TallyError):
                raise
            raise TallyError(f"malformed tally dict: {exc}") from None
        tally.check_source(source)
        return tally

    @classmethod
    def _from_fields(cls, data: dict[str, Any], fingerprint: str | None) -> Self:
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class Tally(BaseTally):
    """Counts of ``n`` reports over ``d`` items.

    Parameters
    ----------
    n : int
        Number of reports (users).
    counts : array_like of int
        Per-item support counts, length ``d``.
    kind : str
        Which report family produced the counts (``"direct"`` or ``"unary"``). Tallies
        of different kinds or lengths refuse to merge.
    fingerprint : str, optional
        Fingerprint of the mechanism that made the tally (set by ``Mechanism.tally`` and
        ``Mechanism.simulate``).
    ones : array_like of int, optional
        Unary tallies of reports: the number of reports with ``s`` ones, ``s = 0..d`` (module
        docstring); None when unknown (a count-level simulation, a tally built by hand).
    tails : dict, optional
        With ``ones``: ``{s: per-bit counts of the reports with s ones}`` for the numbers of ones in
        the oracle's tail region that some report has.

    Examples
    --------
    >>> import pldp
    >>> mech = pldp.KRR(1.0, 3)
    >>> t = mech.tally([0, 2, 2]) + mech.tally([1])
    >>> t.n, t.counts.tolist()
    (4, [1, 1, 2])
    """

    FORMAT: ClassVar[str] = TALLY_FORMAT
    LEGACY_FORMATS: ClassVar[tuple[str, ...]] = ("pldp.tally/1",)

    n: int
    counts: np.ndarray
    kind: str = "direct"
    fingerprint: str | None = None
    ones: np.ndarray | None = None
    tails: dict[int, np.ndarray] | None = None

    def __post_init__(self) -> None:
        try:
            n = check_int(self.n, "n", 0)
        except ValueError as exc:
            raise TallyError(str(exc)) from None
        if self.kind not in TALLY_KINDS:
            raise TallyError(f"unknown tally kind {self.kind!r}; expected one of {TALLY_KINDS}")
        if self.fingerprint is not None and not is_fingerprint(self.fingerprint):
            raise TallyError(f"malformed fingerprint {self.fingerprint!r}")
        counts = as_counts(self.counts, "counts")
        if counts.size == 0:
            raise TallyError("counts must not be empty")
        if self.kind == "direct" and counts.sum() != n:
            raise TallyError(f"direct-encoding counts must sum to n={n}, they sum to {int(counts.sum())}")
        if counts.size and counts.max(initial=0) > n:
            raise TallyError(f"a count exceeds n={n}: {int(counts.max())}")
        counts = counts.copy()
        counts.setflags(write=False)
        object.__setattr__(self, "n", int(n))
        object.__setattr__(self, "counts", counts)
        self._check_report_stats()

    @classmethod
    def _drawn(cls, n: int, counts: np.ndarray, kind: str, fingerprint: str) -> Tally:
        """The tally of ``counts`` a mechanism has just drawn (``simulate``): a new 1-D int64 array of
        ``n`` users, valid by construction, taken as it is (read-only) without the checks and copy of
        the constructor, which cost a Monte Carlo run more than the draw itself."""
        if counts.dtype != np.int64 or counts.ndim != 1 or counts.base is not None:
            return cls(n, counts, kind, fingerprint)
        counts.setflags(write=False)
        return cls._unchecked(n=n, counts=counts, kind=kind, fingerprint=fingerprint, ones=None, tails=None)

    @classmethod
    def _unchecked(cls, **fields: Any) -> Tally:
        """A tally of every field given, set as it is: no check, no copy (the callers' fields are
        valid by construction; :meth:`_drawn`, :meth:`with_report_stats`)."""
        tally = object.__new__(cls)
        for name, value in fields.items():
            object.__setattr__(tally, name, value)
        return tally

    def _check_report_stats(self) -> None:
        if self.ones is None:
            if self.tails is not None:
                raise TallyError("tails need the ones histogram")
            return
        if self.kind != "unary":
            raise TallyError("only a unary tally has a histogram of ones")
        ones = as_counts(self.ones, "ones")
        if ones.size != self.d + 1 or int(ones.sum()) != self.n:
            raise TallyError(f"ones must count the {self.n} reports by their 0..{self.d} ones")
        tails = {}
        for s, v in (self.tails or {}).items():
            vec = as_counts(v, "tails")
            if not 0 <= int(s) <= self.d or vec.size != self.d or np.any(vec > ones[int(s)]):
                raise TallyError(f"tails[{s}] must hold {self.d} per-bit counts of the reports with {s} ones")
            tails[int(s)] = vec
        object.__setattr__(self, "ones", ones)
        object.__setattr__(self, "tails", tails)

    @property
    def d(self) -> int:
        """Number of items."""
        return int(self.counts.size)

    @property
    def frequencies(self) -> np.ndarray:
        """Observed support frequencies ``counts / n`` (NaN-free: zeros when n = 0)."""
        if self.n == 0:
            return np.zeros(self.d)
        return self.counts / self.n

    @classmethod
    def empty(cls, d: int, kind: str = "direct", fingerprint: str | None = None) -> Tally:
        """A tally of zero reports."""
        return cls(0, np.zeros(check_int(d, "d", 1), dtype=np.int64), kind, fingerprint)

    def _merge(self, other: Tally) -> Tally:
        if other.kind != self.kind or other.d != self.d:
            raise TallyError(
                f"cannot merge a {other.kind} tally over {other.d} items into a {self.kind} tally over {self.d} items"
            )
        if self.ones is None or other.ones is None:  # report statistics survive only if both have them
            return Tally(self.n + other.n, self.counts + other.counts, self.kind, self.fingerprint)
        tails = _add_tails(self.tails or {}, other.tails or {})
        return Tally(
            self.n + other.n, self.counts + other.counts, self.kind, self.fingerprint, self.ones + other.ones, tails
        )

    def with_report_stats(self, ones: np.ndarray, tails: dict[int, np.ndarray]) -> Tally:
        """This tally (of its class) with the histogram of ones and the tail counts of its reports.

        Only the new statistics are checked (this tally's other fields already were, and are
        read-only): the constructor's checks and copy again would cost a small tally more than
        counting its reports."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        tally = type(self)._unchecked(**{**fields, "ones": ones, "tails": tails})
        tally._check_report_stats()
        return tally

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Tally)
            and self.kind == other.kind
            and self.n == other.n
            and self.fingerprint == other.fingerprint
            and np.array_equal(self.counts, other.counts)
            and _same_array(self.ones, other.ones)
            and (self.tails or {}).keys() == (other.tails or {}).keys()
            and all(np.array_equal(v, (other.tails or {})[s]) for s, v in (self.tails or {}).items())
        )

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "n": self.n, "counts": self.counts.tolist()}
        if self.ones is not None:
            out["ones"] = self.ones.tolist()
            out["tails"] = {str(s): v.tolist() for s, v in sorted((self.tails or {}).items())}
        return out

    @classmethod
    def _from_fields(cls, data: dict[str, Any], fingerprint: str | None) -> Tally:
        ones = data.get("ones")
        tails = data.get("tails")
        return cls(
            data["n"],
            np.asarray(data["counts"]),
            data["kind"],
            fingerprint,
            None if ones is None else np.asarray(ones),
            None if tails is None else {int(s): np.asarray(v) for s, v in tails.items()},
        )
