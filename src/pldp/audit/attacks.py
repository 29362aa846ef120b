"""LDP-Auditor's attacks (Arcolezi & Gambs, PETS 2024), so that pldp's numbers compare with theirs.

LDP-Auditor guesses the user's item from one report and counts how often the guess is ``x0``:

* **GRR** (direct encoding): the guess is the report. For two items of one mechanism this is
  the optimal test, so GRR audits tight.
* **Unary encoding** (RAPPOR, OUE, ...): the guess is uniform among the set bits, and uniform
  over the domain when no bit is set. It fires on ``x0``'s bit only a ``1/m`` share of the time
  (``m`` set bits) and on reports where ``x0``'s bit is clear never, so it recovers only about
  :math:`\\varepsilon/2` for basic RAPPOR, where the optimal test ("bit ``x0`` set and bit ``x1``
  clear", :mod:`pldp.audit.events`) is tight.

Their exact probabilities follow from the Poisson-binomial law of the number of other set bits
:math:`M`: :math:`\\Pr[\\text{guess } x_0] = q_{x_0}\\,E[1/(1+M)] + (1-q_{x_0}) \\Pr[M = 0]/d`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import stats

from pldp.audit.events import Columns, Test, bit_of
from pldp.audit.pairs import Input, Pair
from pldp.bitcount import row_ones
from pldp.channel import AttributesNode, DirectNode, LeveledNode, MemoNode, Node, NodeVisitor, PaddingNode, UnaryNode
from pldp.channel.sampling import GRID
from pldp.errors import ParameterError

__all__ = ["ATTACKS", "ldp_auditor_test"]

#: The attacks :func:`pldp.audit.audit` runs.
ATTACKS = ("optimal", "ldp-auditor")


def _others_pmf(probs: np.ndarray) -> np.ndarray:
    """Law of the number of set bits among independent bits of the given probabilities."""
    pmf = np.ones(1)
    values, counts = np.unique(probs, return_counts=True)
    for p, m in zip(values, counts, strict=True):
        pmf = np.convolve(pmf, stats.binom.pmf(np.arange(m + 1), m, p))
    return pmf


def _guess_probability(node: UnaryNode, own: int, x0: int) -> float:
    q = node.bit_thresholds(own) / GRID
    others = _others_pmf(np.delete(q, x0))
    m = np.arange(others.size)
    return float(q[x0] * np.sum(others / (1 + m)) + (1 - q[x0]) * others[0] / node.d)


def _unary_hits(x0: int, d: int, col: str) -> Callable[[Columns, np.random.Generator], np.ndarray]:
    def hits(cols: Columns, rng: np.random.Generator) -> np.ndarray:
        packed = np.asarray(cols[col])
        m = row_ones(packed)
        u = rng.random(packed.shape[0])
        own = bit_of(packed, x0).astype(bool)
        return np.where(m > 0, own & (u * m < 1), u * d < 1)

    return hits


#: What LDP-Auditor's attacks apply to.
_GRR_OR_UNARY = "LDP-Auditor's attacks guess an item from a GRR or unary report"
#: Why LDP-Auditor's attacks do not apply to a pair.
_ITEMS_ONLY = f"{_GRR_OR_UNARY}; audit item-sets and levels with attack='optimal'"


class _AttackTest(NodeVisitor[Test]):
    """LDP-Auditor's test of a pair of inputs: ``node.accept(_ATTACK, x0, x1, prefix)``."""

    def direct(self, node: DirectNode, x0: Input, x1: Input, prefix: str) -> Test:
        w = np.asarray(node.weights, dtype=float) / GRID
        col, item = prefix + "item", x0.item
        return Test(
            w[item] + node.keep / GRID, w[item], lambda cols, rng: np.asarray(cols[col], dtype=np.int64) == item
        )

    def unary(self, node: UnaryNode, x0: Input, x1: Input, prefix: str) -> Test:
        return Test(
            _guess_probability(node, x0.item, x0.item),
            _guess_probability(node, x1.item, x0.item),
            _unary_hits(x0.item, node.d, prefix + "bits"),
        )

    def padding(self, node: PaddingNode, x0: Input, x1: Input, prefix: str) -> Test:
        raise ParameterError(_ITEMS_ONLY)

    def leaf(self, node: Node, x0: Input, x1: Input, prefix: str) -> Test:
        raise ParameterError(f"{_GRR_OR_UNARY}; audit a {node.kind} node with attack='optimal'")

    def leveled(self, node: LeveledNode, x0: Input, x1: Input, prefix: str) -> Test:
        if x0.level != x1.level:
            raise ParameterError(_ITEMS_ONLY)
        return node.items[x0.level].accept(self, Input(x0.item), Input(x1.item), prefix)

    def attributes(self, node: AttributesNode, x0: Input, x1: Input, prefix: str) -> Test:
        diff = [k for k in range(len(node.parts)) if (x0.item[k], x0.level[k]) != (x1.item[k], x1.level[k])]
        if len(diff) != 1:
            raise ParameterError(_ITEMS_ONLY)
        k = diff[0]
        i0, i1 = Input(x0.item[k], x0.level[k]), Input(x1.item[k], x1.level[k])
        return node.parts[k].accept(self, i0, i1, f"{prefix}a{k}.")

    def memo(self, node: MemoNode, x0: Input, x1: Input, prefix: str) -> Test:
        return node.one_report().accept(self, x0, x1, prefix)


_ATTACK = _AttackTest()


def ldp_auditor_test(node: Node, pair: Pair) -> Test:
    """LDP-Auditor's test of ``pair`` (module docstring): fires when the attack guesses ``x0``.

    Examples
    --------
    Basic RAPPOR at epsilon = 2: the attack's limit is about half the budget.

    >>> import pldp
    >>> t = ldp_auditor_test(pldp.RAPPOR(2.0, 10).sampler(), Pair("item", Input(0), Input(1)))
    >>> round(t.log_ratio, 2)
    1.16
    """
    if pair.secret not in ("item",):
        raise ParameterError(f"LDP-Auditor's attacks audit items, not {pair.secret}s; use attack='optimal'")
    return node.accept(_ATTACK, pair.x0, pair.x1, "")
