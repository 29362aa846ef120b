r"""SFP, the sequence fragment puzzle: the most frequent strings of an unknown domain, from fragments.

Apple's Differential Privacy Team, "Learning with Privacy at Scale", Apple Machine Learning Journal
1(8), 2017 (the sequence fragment puzzle), as Cormode, Maddock and Maple's ``pure-ldp`` serves it
(``SFPServer``). Answers are rows of ``L = max_bytes`` bytes (:mod:`pldp.heavy.strings`), cut into
``P = L / b`` fragments of ``b = fragment_bytes`` bytes, at byte offsets ``0, b, ..., L - b``.

The client. A user holding the row :math:`w` draws her position ``j`` uniformly from ``0 .. P-1``,
independently of her answer, and reports two things at her level's budget :math:`\varepsilon`:

* her *fragment* at ``j``, tagged with a short hash of her whole answer,

  .. math::

      x_j(w) = h(w)\, 256^b + w_{jb} \dots w_{jb + b - 1} \in [0, d_F), \qquad
      h(w) = \varphi(w) \bmod 2^k, \quad d_F = 2^{k + 8 b},

  (the fragment's bytes read as a big-endian number, ``k = hash_bits``, :math:`\varphi` the row's
  fingerprint, :func:`~pldp.heavy.strings.fingerprints`), through OLH over the Toeplitz family at
  :math:`\varepsilon_F = s\,\varepsilon` (``s = split``; :class:`~pldp.channel.HashedNode`, ``g``
  :func:`~pldp.mechanisms.hashed.toeplitz_g`), so that the server counts all ``d_F`` items at once;
* her *word*, the fingerprint :math:`\varphi(w)`, through OLH over XXH32 at
  :math:`\varepsilon_W = \varepsilon - \varepsilon_F` (the node of
  :func:`~pldp.heavy.pooled.level_nodes`).

One report ``(level, position, fragment_seed, fragment_value, word_seed, word_value)``. Privacy: the
position tells nothing of the answer and the two parts are drawn independently, so for two answers

.. math::

    \frac{\Pr(r \mid w)}{\Pr(r \mid w')} =
    \frac{\Pr_F(s_F, y_F \mid x_j(w))}{\Pr_F(s_F, y_F \mid x_j(w'))} \cdot
    \frac{\Pr_W(s_W, y_W \mid \varphi(w))}{\Pr_W(s_W, y_W \mid \varphi(w'))}
    \le e^{\varepsilon_F} e^{\varepsilon_W} = e^{\varepsilon}

(sequential composition), and the bound is attained: two answers that differ differ in some
byte, hence in their fragment at its position, and as words (their fingerprints differ but for a
chance of about ``2^-31``), so a report at that position whose two seeds separate both pairs
attains both ratios at once. :meth:`SFP.privacy` checks both nodes and their product exactly.

The server (:meth:`SFP.discover`). For each position ``j``, the estimates of all ``d_F`` fragment
items from the position's reports: the Toeplitz support counts (:func:`~pldp.mechanisms.toeplitz.toeplitz_support`),
each level's OLH estimate :math:`\hat f_t = (C_t / n_t - q_t^*) / (p_t^* - q_t^*)` and the levels
pooled with weights :math:`w_t \propto n_t / V_t` (:mod:`pldp.heavy.pooled`); the ``width`` largest
are kept, whatever their size (no floor: the word estimates below carry their own). The puzzle:
for every hash value kept at every position, the words it may tag are the product of its
fragments over the positions; a row that is not a padded answer (a first byte ``0x00``, or a
``0x00`` followed by another byte) is dropped, and so is one whose own hash is not the value it
was assembled under (nobody holds it: every holder's fragments carry her own hash). Each
remaining candidate's share is estimated from the word reports of *all* users, pooled over levels,

.. math::

    \hat f(w) = \sum_t w_t \frac{C_t(\varphi(w)) / n_t - q_t^*}{p_t^* - q_t^*}, \qquad
    \operatorname{Var} \hat f = \sum_t \frac{w_t^2}{n_t}
    \frac{f p_t^*(1 - p_t^*) + (1 - f) q_t^*(1 - q_t^*)}{(p_t^* - q_t^*)^2} .

A user's word report is drawn independently of her fragment report, so given the answers the
candidates (a function of the fragment reports) tell nothing of the word reports' noise: given
the candidates, each word estimate is unbiased for the population's share with the variance
above. The top ``top`` are returned, largest first, as a :class:`~pldp.heavy.discovery.Discovery`
whose floor is :func:`~pldp.heavy.discovery.noise_quantile` of the candidates times the word
estimate's standard error at an absent item; the answers near the cut still lean high, being
chosen by the estimates they report.

What it cannot see. Answers longer than ``L`` bytes are seen as their first ``L`` bytes. A word is
found only when its fragment is among the ``width`` largest at *every* position: each position
hears ``n / P`` users at :math:`\varepsilon_F`, so a share well above
:math:`z \sqrt{P V_F / n}` is needed (``V_F`` OLH's factor, ``z`` about 6 for the largest noise
among ``2^24`` items); rarer words are missed whatever the word reports say. Words that share a
hash value and a fragment are one item to the fragment oracle (their shares add), and words that
share a hash value multiply each other's candidates (the word reports sort them out; a hash value
is shared by a pair of words with probability ``2^-k``). At most :data:`MAX_CANDIDATES` rows are
assembled: beyond, the hash value with the largest product loses, at its position holding the most
fragments, its smallest estimate, until the rows fit.

Cost. Per position and level, ``n_{jt} g`` additions and one Walsh-Hadamard transform of
``2^{k + 8b}`` cells (``2^24`` by default: about 1.3 s on one core, and some 0.8 GB at its peak,
freed before the next position); then ``n`` word reports against each of the ``m`` candidates
(``n m`` hash evaluations, :func:`~pldp.mechanisms.hashed.item_support`). With the defaults, 10^6
users at :math:`\varepsilon = 4` and ``top = 20``, :meth:`SFP.discover` takes 10-12 s on one core,
almost all of it in the eight transforms. A client computes one fingerprint (with the rows, some
6 microseconds a user in Python).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pldp._validation import check_int
from pldp.channel.hashed import HashedNode
from pldp.channel.toeplitz import toeplitz_fits
from pldp.domain import Domain
from pldp.errors import EstimationError, ParameterError, ReportError
from pldp.estimation import Estimate
from pldp.heavy.base import HeavyHitter
from pldp.heavy.discovery import Discovery, noise_quantile
from pldp.heavy.pooled import (
    budgets_text,
    checked_protocol,
    level_nodes,
    pooled_all,
    pooled_estimates,
)
from pldp.heavy.prefixes import possible
from pldp.heavy.strings import fingerprints, shown
from pldp.mechanisms.hashed import olh_grid, toeplitz_g

__all__ = ["MAX_CANDIDATES", "SFP", "assemble_words"]

#: The most rows the puzzle assembles before its filters (module docstring, "What it cannot see").
MAX_CANDIDATES = 1 << 16


class SFP(HeavyHitter):
    """The sequence fragment puzzle: ``perturb`` on each device, ``discover`` at the server.

    Parameters
    ----------
    epsilon : float or sequence of float
        Every user's budget, or the budget levels (strictly increasing): each user reports at her
        level's budget, the level in the clear, like :class:`~pldp.heavy.PEM`.
    max_bytes : int, default 16
        ``L``: the bytes of an answer kept, a multiple of ``fragment_bytes`` (at most 64).
    fragment_bytes : int, default 2
        ``b``: the bytes of a fragment; ``P = L / b`` positions.
    hash_bits : int, default 8
        ``k``: the bits of the hash tagging a fragment; the fragment oracle's ``d_F = 2^(k + 8 b)``
        items must fit the Toeplitz family (``k + 8 b <= 30``).
    split : float, default 0.5
        The share of each budget spent on the fragment, in ``(0, 1)``; the word gets the rest.

    Examples
    --------
    >>> import numpy as np
    >>> sfp = SFP(4.0, max_bytes=4, hash_bits=4)
    >>> answers = ["cat"] * 5000 + ["dog"] * 3000 + ["owl"] * 2000
    >>> found = sfp.discover(sfp.perturb(answers, np.random.default_rng(7)), top=2)
    >>> found.answers
    ['cat', 'dog']
    """

    def __init__(
        self,
        epsilon: float | Sequence[float],
        max_bytes: int = 16,
        fragment_bytes: int = 2,
        hash_bits: int = 8,
        split: float = 0.5,
    ) -> None:
        self.levels, self.max_bytes, self.split = checked_protocol(epsilon, max_bytes, split)
        self.fragment_bytes = check_int(fragment_bytes, "fragment_bytes", 1)
        self.hash_bits = check_int(hash_bits, "hash_bits", 1)
        if self.max_bytes % self.fragment_bytes:  # checked_protocol bounds it by 64
            raise ParameterError(
                f"max_bytes must be a multiple of fragment_bytes ({self.fragment_bytes}), got {self.max_bytes}"
            )
        self.positions = self.max_bytes // self.fragment_bytes
        self.d_fragments = 1 << (self.hash_bits + 8 * self.fragment_bytes)
        if why := toeplitz_fits(self.d_fragments, 2):
            raise ParameterError(f"hash_bits + 8 fragment_bytes is too large: {why}")
        eps_f = self.levels * self.split
        self.fragment_nodes = tuple(self._fragment_node(float(e)) for e in eps_f)
        self.word_nodes = level_nodes(self.levels - eps_f)

    def _fragment_node(self, epsilon: float) -> HashedNode:
        g = toeplitz_g(epsilon, self.d_fragments)
        return HashedNode(self.d_fragments, g, "toeplitz", *olh_grid(epsilon, g), epsilon)

    def __repr__(self) -> str:
        return (
            f"SFP(epsilon={budgets_text(self.levels)}, max_bytes={self.max_bytes}, "
            f"fragment_bytes={self.fragment_bytes}, hash_bits={self.hash_bits}, split={self.split:g})"
        )

    @property
    def limits(self) -> str:
        """What the protocol cannot see, in words (module docstring)."""
        return (
            f"answers longer than {self.max_bytes} bytes are seen as their first {self.max_bytes} bytes; "
            f"a word is found only when its {self.fragment_bytes}-byte fragment is among the largest "
            f"estimates at each of the {self.positions} positions, each heard by 1/{self.positions} "
            f"of the users; words sharing a {self.hash_bits}-bit hash and a fragment are one fragment"
        )

    # ---------------------------------------------------------------------- client
    name = "SFP"

    @property
    def parts(self) -> dict[str, tuple[HashedNode, ...]]:
        """The fragment part and the word part, each level's node of each."""
        return {"fragment": self.fragment_nodes, "word": self.word_nodes}

    @property
    def node_options(self) -> dict[str, Any]:
        """SFP's node: a tagged fragment per position, and the whole answer."""
        return {
            "protocol": "sfp",
            "max_bytes": self.max_bytes,
            "fragment_bytes": self.fragment_bytes,
            "hash_bits": self.hash_bits,
        }

    def params(self) -> dict[str, Any]:
        """The constructor's arguments, as JSON values (:func:`pldp.heavy.heavy_from_params` rebuilds it)."""
        return {"name": "SFP", "epsilon": self.levels.tolist(), "split": self.split, **self._node_arguments}

    # ---------------------------------------------------------------------- server
    def discover(self, reports: Any, top: int = 20, width: int | None = None, pooling: str = "variance") -> Discovery:
        """The ``top`` answers of the largest estimated shares, assembled from fragments (module docstring).

        Parameters
        ----------
        reports : array_like of int, shape (n, 6)
            :meth:`perturb`'s rows.
        top : int, default 20
            The answers returned (fewer when fewer candidates are assembled).
        width : int, optional
            Fragments kept at each position; default ``top``.
        pooling : {"variance", "robust"}, default "variance"
            How the budget levels' estimates are pooled (:func:`~pldp.heavy.pooled.absent_weights`): by
            inverse variance, or so that a report moves an estimate alike whatever level it claims
            (fake users then gain nothing by claiming the largest budget, at a cost in variance).

        Raises
        ------
        ReportError
            A report out of range, or a position without reports.
        EstimationError
            No hash value is kept at every position, so no word can be assembled.
        """
        rep = self.checked(reports)
        top = check_int(top, "top", 1)
        width = top if width is None else check_int(width, "width", top)
        kept, miss = [], 0.0
        for j in range(self.positions):
            mine = rep[rep[:, 1] == j]
            if mine.shape[0] == 0:
                raise ReportError(f"position {j} has no reports: SFP needs every position")
            f, se = pooled_all(self.fragment_nodes, mine[:, [0, 2, 3]], self.d_fragments, pooling)
            miss = max(miss, noise_quantile(self.d_fragments) * se)
            best = np.argpartition(-f, width - 1)[:width] if width < f.size else np.arange(f.size)
            kept.append(best[np.argsort(-f[best], kind="stable")])  # largest first
            del f
        rows, words, assembled = assemble_words(kept, self.fragment_bytes, self.hash_bits)
        if rows.shape[0] == 0:
            raise EstimationError(
                f"no word assembled from {assembled} rows: no hash value is kept at every position "
                "with fragments that form an answer (too few reports, or a larger width)"
            )
        f, var, se = pooled_estimates(self.word_nodes, rep[:, [0, 4, 5]], words, pooling=pooling)
        order = np.argsort(-f, kind="stable")[:top]
        labels = [shown(row) for row in rows[order]]
        info = {"width": width, "candidates": int(rows.shape[0]), "assembled": assembled, "pooling": pooling}
        est = Estimate(f[order], var[order], rep.shape[0], "unbiased", Domain(labels), info=info)
        return Discovery(est, self.max_bytes, noise_quantile(rows.shape[0]) * se, miss)

    def fragment_estimates(self, reports: Any, position: int) -> np.ndarray:
        """The pooled estimates of all ``d_F`` fragment items at ``position`` (:func:`~pldp.heavy.pooled.pooled_all`):
        item ``h 256^b + v`` is the fragment ``v`` (big-endian) of the words whose hash is ``h``."""
        rep = self.checked(reports)
        j = check_int(position, "position", 0)
        if j >= self.positions:
            raise ParameterError(f"position must lie in [0, {self.positions}), got {j}")
        return pooled_all(self.fragment_nodes, rep[rep[:, 1] == j][:, [0, 2, 3]], self.d_fragments)[0]


def assemble_words(
    kept: Sequence[np.ndarray], fragment_bytes: int, hash_bits: int, cap: int = MAX_CANDIDATES
) -> tuple[np.ndarray, np.ndarray, int]:
    """The puzzle: the words the kept fragment items of each position (largest estimate first) may form.

    For each hash value kept at every position, the product of its fragments over the positions
    (trimmed to ``cap`` rows in all: the hash value with the largest product loses the smallest
    estimate of its position holding the most, until the rows fit); rows that are not padded answers,
    or whose own hash is not the value they were assembled under, are dropped.

    Returns
    -------
    rows : ndarray of uint8, shape (m, P b)
        The candidates.
    words : ndarray of int64, shape (m,)
        Their fingerprints (:func:`~pldp.heavy.strings.fingerprints`).
    assembled : int
        Rows assembled before the filters.
    """
    b, shift = fragment_bytes, 8 * fragment_bytes
    per_hash: dict[int, list[np.ndarray]] = {}
    for h in sorted(set.intersection(*(set((np.asarray(k) >> shift).tolist()) for k in kept))):
        per_hash[h] = [np.asarray(k)[(np.asarray(k) >> shift) == h] & ((1 << shift) - 1) for k in kept]
    sizes = {h: [x.size for x in frags] for h, frags in per_hash.items()}
    while sum(math.prod(m) for m in sizes.values()) > cap:
        h = max(sizes, key=lambda v: math.prod(sizes[v]))
        if math.prod(sizes[h]) == 1:  # one row per hash value left: the fewest the puzzle can assemble
            break
        j = int(np.argmax(sizes[h]))
        sizes[h][j] -= 1  # its smallest estimate at position j (kept is largest first)
    blocks, tags = [], []
    byte_shifts = 8 * np.arange(b - 1, -1, -1)
    for h, frags in per_hash.items():
        grid = np.indices(sizes[h]).reshape(len(frags), -1)
        cols = [(frags[j][: sizes[h][j]][grid[j]][:, None] >> byte_shifts) & 255 for j in range(len(frags))]
        blocks.append(np.concatenate(cols, axis=1).astype(np.uint8))
        tags.append(np.full(grid.shape[1], h, dtype=np.int64))
    if not blocks:
        return np.zeros((0, len(kept) * b), dtype=np.uint8), np.zeros(0, dtype=np.int64), 0
    rows, tag = np.concatenate(blocks), np.concatenate(tags)
    valid = possible(rows, 8 * rows.shape[1])
    rows, tag = rows[valid], tag[valid]
    words = fingerprints(rows)
    own = (words & ((1 << hash_bits) - 1)) == tag
    return rows[own], words[own], int(valid.size)
