r"""TreeHist: the frequent prefixes of a tree, then every candidate estimated from a report of the whole answer.

Bassily, Nissim, Stemmer, Thakurta, "Practical Locally Private Heavy Hitters", NIPS 2017 and JMLR
21(16), 2020 (TreeHist, Sec. 3); pure-ldp's ``TreeHistServer`` (Cormode, Maddock, Maple) is the same
protocol over characters. Answers are rows of ``L = max_bytes`` bytes (:mod:`pldp.heavy.strings`),
and a prefix grows ``s = step_bits`` bits a step (:mod:`pldp.heavy.prefixes`): the paper's binary
tree is ``s = 1``, bytes (PEM's steps) ``s = 8``.

The client. A user draws her depth ``j`` uniformly from ``1 .. D`` with ``D = 8 L / s``,
independently of her answer, and sends two parts drawn independently from her answer: the
fingerprint of her prefix of ``j s`` bits through local hashing at
:math:`\varepsilon_p = \text{split} \cdot \varepsilon` (the *prefix* part), and the fingerprint of
her whole row at :math:`\varepsilon_w = (1 - \text{split})\,\varepsilon` (the *word* part), each an
OLH :class:`~pldp.channel.HashedNode` over the fingerprints. One report
``(level, depth, prefix_seed, prefix_value, word_seed, word_value)``; its epsilon is
:math:`\varepsilon_p + \varepsilon_w`, attained (:meth:`TreeHist.privacy`,
:func:`~pldp.heavy.pooled.composed_check`).

The server (:meth:`TreeHist.discover`). Depth by depth, each kept prefix is grown by each value of
its next ``s`` bits and the depth's group estimates the candidates (OLH's unbiased estimate of the
group's share, pooled over the levels, the group a sample of each level's users:
:mod:`pldp.heavy.pooled`); it keeps the ``width`` largest, or with ``threshold`` those estimated at
least that share (Bassily et al.'s :math:`\eta`; still at most ``width``). The candidates of the
last depth are whole answers, and the word parts of *all* ``n`` users estimate them:

.. math::

    \hat f(x) = \frac{C(x) / n - q_w^*}{p_w^* - q_w^*}, \qquad
    \operatorname{Var} \hat f(x) = \frac{f p_w^*(1 - p_w^*) + (1 - f) q_w^*(1 - q_w^*)}{n (p_w^* - q_w^*)^2}.

What it buys and costs against PEM (:class:`~pldp.heavy.PEM`). The word part's randomness is
independent of the prefix parts', which chose the candidates: given the candidates each final
estimate is unbiased with the variance above, over ``n`` users instead of one group's ``n / D``;
only the choice of the ``top`` among more candidates reads the same estimates (with ``width =
top``, the default, every candidate is returned and each interval has its nominal coverage). The
price is the split: each part has a share of the budget, so each step sees the prefixes at
:math:`\varepsilon_p` only.

What it cannot see. As PEM: answers longer than ``L`` bytes are their first ``L`` bytes, and an
answer whose prefixes are not well above one group's standard error at an absent item,
:math:`\sqrt{V_p / (n / D)}`, may drop out at some depth. Among the last depth's candidates held by
nobody the largest word estimate is some four standard errors: :class:`~pldp.heavy.Discovery`'s
floor.

Cost. Depth ``j``'s ``n / D`` reports against its ``2^s width`` candidates: ``2^s width n`` hash
evaluations in all, which grow with ``s`` (``s = 1`` has ``8 L`` groups of ``2 width`` candidates,
``s = 8`` has ``L`` groups of ``256 width``), plus ``n`` times the candidates for the word parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pldp._validation import check_int
from pldp.channel.hashed import HashedNode
from pldp.domain import Domain
from pldp.errors import ParameterError
from pldp.estimation import Estimate
from pldp.heavy.base import HeavyHitter
from pldp.heavy.discovery import Discovery, noise_quantile
from pldp.heavy.pooled import (
    budgets_text,
    checked_protocol,
    level_nodes,
    pooled_estimates,
)
from pldp.heavy.prefixes import STEPS
from pldp.heavy.strings import fingerprints, shown
from pldp.heavy.tree import search

__all__ = ["TreeHist"]


class TreeHist(HeavyHitter):
    """TreeHist over OLH: ``perturb`` on each device, ``discover`` at the server (module docstring).

    Parameters
    ----------
    epsilon : float or sequence of float
        Every user's budget, or the budget levels (strictly increasing), the level in the clear.
    max_bytes : int, default 16
        ``L``: the bytes of an answer kept (1 to 64).
    step_bits : int, default 8
        ``s``: the bits a prefix grows a step, 1, 2, 4 or 8; ``8 L / s`` depths.
    split : float, default 0.5
        The share of each budget the prefix part spends; the word part spends the rest.

    Examples
    --------
    >>> import numpy as np
    >>> tree = TreeHist(4.0, max_bytes=3)
    >>> answers = ["cat"] * 5000 + ["dog"] * 3000 + ["owl"] * 2000
    >>> found = tree.discover(tree.perturb(answers, np.random.default_rng(7)), top=2)
    >>> found.answers
    ['cat', 'dog']
    """

    def __init__(
        self, epsilon: float | Sequence[float], max_bytes: int = 16, step_bits: int = 8, split: float = 0.5
    ) -> None:
        self.levels, self.max_bytes, self.split = checked_protocol(epsilon, max_bytes, split)
        if step_bits not in STEPS:
            raise ParameterError(f"step_bits must be one of {STEPS}, got {step_bits}")
        self.step_bits = int(step_bits)
        self.depths = 8 * self.max_bytes // self.step_bits
        self.prefix_nodes = level_nodes(self.levels * self.split)
        self.word_nodes = level_nodes(self.levels - self.levels * self.split)  # the two sum to the budget in floats

    def __repr__(self) -> str:
        return (
            f"TreeHist(epsilon={budgets_text(self.levels)}, max_bytes={self.max_bytes}, "
            f"step_bits={self.step_bits}, split={self.split:g})"
        )

    name = "TreeHist"

    @property
    def parts(self) -> dict[str, tuple[HashedNode, ...]]:
        """The prefix part and the word part, each level's node of each."""
        return {"prefix": self.prefix_nodes, "word": self.word_nodes}

    @property
    def node_options(self) -> dict[str, Any]:
        """TreeHist's node: a prefix ``step_bits`` longer per depth, and the whole answer."""
        return {"protocol": "treehist", "max_bytes": self.max_bytes, "step_bits": self.step_bits}

    def params(self) -> dict[str, Any]:
        """The constructor's arguments, as JSON values (:func:`pldp.heavy.heavy_from_params` rebuilds it)."""
        return {"name": "TreeHist", "epsilon": self.levels.tolist(), "split": self.split, **self._node_arguments}

    # ---------------------------------------------------------------------- server
    def discover(
        self,
        reports: Any,
        top: int = 20,
        width: int | None = None,
        threshold: float | None = None,
        pooling: str = "variance",
    ) -> Discovery:
        """The ``top`` answers of the largest word estimates among the last depth's candidates.

        Parameters
        ----------
        reports : array_like of int, shape (n, 6)
            :meth:`perturb`'s rows.
        top : int, default 20
            The answers returned.
        width : int, optional
            Prefixes kept at each depth at most; default ``top``.
        threshold : float, optional
            Keep only the prefixes estimated at least this share (at most ``width`` of them); by
            default the ``width`` largest. A :class:`~pldp.errors.EstimationError` says so when it
            keeps none at some depth.
        pooling : {"variance", "robust"}, default "variance"
            How the budget levels' estimates are pooled (:func:`~pldp.heavy.pooled.absent_weights`): by
            inverse variance, or so that a report moves an estimate alike whatever level it claims
            (fake users then gain nothing by claiming the largest budget, at a cost in variance).
        """
        rep = self.checked(reports)
        top = check_int(top, "top", 1)
        width = top if width is None else check_int(width, "width", top)
        tree = search(
            self.prefix_nodes, rep[:, :4], self.depths, self.step_bits, width, width, threshold, "depth", pooling
        )
        kept = tree.rows
        f, var, se = pooled_estimates(self.word_nodes, rep[:, [0, 4, 5]], fingerprints(kept), pooling=pooling)
        order = np.argsort(-f, kind="stable")[:top]
        labels = [shown(row) for row in kept[order]]
        info = {"width": width, "candidates": int(kept.shape[0]), "step_bits": self.step_bits, "pooling": pooling}
        est = Estimate(f[order], var[order], rep.shape[0], "unbiased", Domain(labels), info=info)
        return Discovery(est, self.max_bytes, noise_quantile(kept.shape[0]) * se, tree.miss)
