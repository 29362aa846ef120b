r"""The audit of a heavy-hitter protocol: what its running code leaks about one answer against another.

:func:`audit_heavy` runs the protocol's client (:meth:`~pldp.heavy.base.HeavyHitter.perturb`, or a
free-text campaign's device client, :class:`pldp.client.Client`)
``trials`` times on an answer ``a`` and as often on ``b``, and counts how often the optimal test of
the pair fires: every part of the report supports ``a``'s item and not ``b``'s, under the report's
own seed,

.. math::

    E = \bigcap_k \{ y_k = H_{s_k}(x_k(a)) \ne H_{s_k}(x_k(b)) \},

with :math:`x_k(\cdot)` the item part ``k`` randomizes in the report's group
(:meth:`~pldp.heavy.base.HeavyHitter.part_items`). On that event each part's likelihood ratio is its
node's largest, :math:`(w_k + \kappa_k) / w_k`, and elsewhere it is smaller, so the test is the most
powerful one of its size, and :math:`\Pr_a(E) / \Pr_b(E)` is the whole report's largest ratio,
:math:`e^{\varepsilon}` of the exact check (:meth:`~pldp.heavy.base.HeavyHitter.privacy`). The
counts give the audited epsilon :math:`\ln(\mathrm{TPR}_{lo} / \mathrm{FPR}_{hi})` with
Clopper-Pearson bounds (:func:`~pldp.audit.bounds.epsilon_lower_bound`): a lower bound on what the
code leaks, which must not exceed the claim, and comes close to it when the code is right.

The test has power only in the groups where the two answers' items differ in every part (a
prefix of TreeHist's ``step_bits < 8`` may be shared by two different first bytes, an SFP fragment
by two answers whose tags collide); the audit refuses two answers that no group tells apart. Both
answers are at one level (``level``), since the level is in the clear.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp._validation import check_int
from pldp.audit.bounds import epsilon_lower_bound
from pldp.audit.jsclient import JSClient
from pldp.channel.hashed import hash_values
from pldp.channel.sampling import generator_words
from pldp.client import Client
from pldp.deploy import Spec
from pldp.errors import ParameterError
from pldp.heavy.base import HeavyHitter
from pldp.heavy.strings import answer_rows

__all__ = ["HeavyAudit", "audit_heavy"]


@dataclass(frozen=True)
class HeavyAudit:
    """The result of :func:`audit_heavy`.

    Attributes
    ----------
    claimed : float
        The whole report's budget at the audited level.
    audited : float
        The lower bound on the epsilon the code realises, at confidence ``1 - alpha``.
    fired : tuple of int
        How often the test fired on ``a``'s reports and on ``b``'s.
    trials : int
        Reports drawn for each answer.
    """

    claimed: float
    audited: float
    fired: tuple[int, int]
    trials: int

    @property
    def holds(self) -> bool:
        """Whether the audited epsilon stays within the claim."""
        return self.audited <= self.claimed


def audit_heavy(
    protocol: HeavyHitter | Spec | JSClient,
    a: Any,
    b: Any,
    trials: int,
    rng: np.random.Generator,
    level: int | None = None,
    alpha: float = 0.01,
) -> HeavyAudit:
    """Audit ``protocol``'s reports of answer ``a`` against ``b`` (module docstring).

    Parameters
    ----------
    protocol : HeavyHitter or Spec
        :class:`~pldp.PEM`, :class:`~pldp.TreeHist` or :class:`~pldp.SFP` (the library's ``perturb``
        draws the reports), or a free-text campaign's spec (:meth:`pldp.deploy.Spec.from_heavy`: the
        device client :class:`pldp.client.Client` draws them, fed words from ``rng``, at the spec's
        level; ``level`` is then the spec's), or the JS client of such a spec
        (:class:`~pldp.audit.jsclient.JSClient`: Node.js runs it with its own CSPRNG, so its reports are
        not seeded).
    a, b : str or bytes
        The two answers.
    trials : int
        Reports drawn for each.
    rng : numpy.random.Generator
        The clients' randomness.
    level : int, optional
        The users' level (default 0); a spec's is its own, and another is refused.
    alpha : float, default 0.01
        One minus the confidence of the bound.

    Examples
    --------
    >>> import numpy as np, pldp
    >>> result = audit_heavy(pldp.TreeHist(2.0, max_bytes=4), "spam", "eggs", 20_000, np.random.default_rng(1))
    >>> result.holds, result.audited > 1.5
    (True, True)
    """
    trials = check_int(trials, "trials", 1)
    if isinstance(protocol, (Spec, JSClient)):
        spec = protocol if isinstance(protocol, Spec) else protocol.spec
        if level is not None:
            raise ParameterError("a spec's devices report at the spec's level: give no level with a spec")
        js = protocol if isinstance(protocol, JSClient) else None
        protocol, level = spec.heavy_hitter(), int(spec.oracle_params["level"])
        client = Client(spec, random=lambda n: generator_words(rng, n))

        def draw(answer: Any) -> np.ndarray:
            columns = client.reports([answer] * trials).columns if js is None else js.columns(answer, None, trials)
            return protocol.reports_from_columns(columns, level)
    else:
        level = 0 if level is None else check_int(level, "level", 0)

        def draw(answer: Any) -> np.ndarray:
            return protocol.perturb([answer] * trials, rng, level=np.full(trials, level))

    every = np.arange(protocol.groups)
    apart = np.ones(every.size, dtype=bool)
    for x, y in zip(
        *(protocol.part_items(answer_rows([w] * every.size, protocol.max_bytes), every) for w in (a, b)), strict=True
    ):
        apart &= x != y
    if not apart.any():
        raise ParameterError("the two answers have the same item in some part of every group: the test cannot fire")
    fired = []
    own_rows = np.repeat(answer_rows([a], protocol.max_bytes), trials, axis=0)
    alt_rows = np.repeat(answer_rows([b], protocol.max_bytes), trials, axis=0)
    for mine in (a, b):
        reports = draw(mine)
        group = reports[:, 1]
        hit = np.ones(trials, dtype=bool)
        own, alt = protocol.part_items(own_rows, group), protocol.part_items(alt_rows, group)
        for k, nodes in enumerate(protocol.parts.values()):
            node = nodes[level]
            seed, value = reports[:, 2 + 2 * k], reports[:, 3 + 2 * k]
            h_a = hash_values(own[k], seed, node.g, node.family)
            h_b = hash_values(alt[k], seed, node.g, node.family)
            hit &= (value == h_a) & (h_a != h_b)
        fired.append(int(hit.sum()))
    claimed = float(protocol.levels[level])
    audited = epsilon_lower_bound(fired[0], trials, fired[1], trials, alpha)
    return HeavyAudit(claimed, audited, (fired[0], fired[1]), trials)
