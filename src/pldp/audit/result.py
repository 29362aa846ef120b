"""The outcome of an audit: one row per pair, as a table and a figure."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from pldp._text import text_table

__all__ = ["AuditResult", "AuditRow"]


@dataclass(frozen=True)
class AuditRow:
    """One audited pair.

    Attributes
    ----------
    secret : str
        What the pair differs in: ``"item"``, ``"item-set"`` or ``"level"``.
    pair : str
        The two inputs (:meth:`pldp.audit.Pair.label`).
    claimed : float
        The epsilon the notion (or the paper) claims for the pair's test (``inf``: nothing
        claimed, e.g. an invertible output of IPLDP).
    exact : float
        The pair's realised epsilon from the exact channel: the log-ratio of the optimal test.
    limit : float
        What this attack's test converges to (``= exact`` for the optimal attack).
    expected : float
        The audited bound a correct sampler gives at the expected hit counts: the audit's
        resolution at this number of trials.
    tpr, fpr : float
        Observed hit rates on ``x0`` and on ``x1``.
    trials : int
        Reports drawn for each input.
    audited : float
        The audited lower bound :math:`\\ln(\\mathrm{TPR}_{lo}/\\mathrm{FPR}_{hi})`.
    flagged : bool
        ``audited > claimed``: the sampler leaks more than claimed (at the stated confidence).
    deviates : bool
        ``audited > exact``: the sampler does not follow its own parameters (a bug even when the
        claim has room to spare, e.g. padding-and-sampling's item-set budgets).
    """

    secret: str
    pair: str
    claimed: float
    exact: float
    limit: float
    expected: float
    tpr: float
    fpr: float
    trials: int
    audited: float
    flagged: bool
    deviates: bool


def _fmt(v: float) -> str:
    return "inf" if v == math.inf else ("-inf" if v == -math.inf else f"{v:.4f}")


@dataclass(frozen=True)
class AuditResult:
    """Rows of an audit and how it ran.

    Attributes
    ----------
    target : str
        What was audited.
    attack : str
        ``"optimal"`` or ``"ldp-auditor"``.
    alpha : float
        The bounds hold *jointly* for every row with confidence ``1 - alpha`` (each row's
        Clopper–Pearson intervals at ``alpha / len(rows)``, Bonferroni).
    rows : list of AuditRow
    seconds : float
        Wall time of the sampling.
    seeded : bool
        Whether the draws came from the audit's generator (same seed, same result).
    """

    target: str
    attack: str
    alpha: float
    rows: list[AuditRow] = field(default_factory=list)
    seconds: float = 0.0
    seeded: bool = True

    @property
    def flagged(self) -> list[AuditRow]:
        """Rows whose audited bound exceeds their claim."""
        return [r for r in self.rows if r.flagged]

    @property
    def deviations(self) -> list[AuditRow]:
        """Rows whose audited bound exceeds the exact channel's epsilon."""
        return [r for r in self.rows if r.deviates]

    @property
    def ok(self) -> bool:
        """No row flagged: nothing leaks more than claimed."""
        return not self.flagged

    @property
    def faithful(self) -> bool:
        """No row deviates: the sampler leaks no more than its own parameters say."""
        return not self.deviations

    @property
    def confidence(self) -> float:
        """The joint confidence of the bounds, ``1 - alpha``."""
        return 1.0 - self.alpha

    def max_gap(self, secrets: tuple[str, ...] = ("item", "item-set", "level")) -> float:
        """The largest ``limit - audited`` over rows of the given secrets: how tight the audit is."""
        gaps = [r.limit - r.audited for r in self.rows if r.secret in secrets and math.isfinite(r.limit)]
        return max(gaps, default=0.0)

    def records(self) -> list[dict[str, Any]]:
        """The rows as dicts (JSON-able, infinities as floats)."""
        return [asdict(r) for r in self.rows]

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame (``pip install pandas``)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is in the experiments extra
            raise ImportError("AuditResult.to_pandas needs pandas: pip install 'pldp[experiments]'") from None
        return pd.DataFrame(self.records())

    def to_json(self) -> dict[str, Any]:
        """Everything, JSON-able (``inf`` as the string ``"inf"``)."""

        def enc(v: Any) -> Any:
            return ("inf" if v > 0 else "-inf") if isinstance(v, float) and math.isinf(v) else v

        return {
            "target": self.target,
            "attack": self.attack,
            "alpha": self.alpha,
            "seconds": self.seconds,
            "seeded": self.seeded,
            "flagged": len(self.flagged),
            "deviations": len(self.deviations),
            "rows": [{k: enc(v) for k, v in r.items()} for r in self.records()],
        }

    def table(self, max_rows: int | None = None) -> str:
        """A plain-text table (flagged rows first when cut to ``max_rows``)."""
        rows = sorted(self.rows, key=lambda r: (not r.flagged, not r.deviates)) if max_rows else self.rows
        head = ["secret", "pair", "claimed", "exact", "limit", "expected", "audited", "trials", "flag"]
        body = [
            [
                r.secret,
                r.pair,
                _fmt(r.claimed),
                _fmt(r.exact),
                _fmt(r.limit),
                _fmt(r.expected),
                _fmt(r.audited),
                str(r.trials),
                "ABOVE CLAIM" if r.flagged else ("ABOVE EXACT" if r.deviates else ""),
            ]
            for r in rows[:max_rows]
        ]
        out = [text_table(body, head)]
        if max_rows is not None and len(self.rows) > max_rows:
            out.append(f"... {len(self.rows) - max_rows} more rows")
        return "\n".join(out)

    def summary(self) -> str:
        """One line: target, pairs, flags and tightness."""
        state = f"{len(self.flagged)} pair(s) ABOVE their claim" if self.flagged else "no pair above its claim"
        if self.deviations:
            state += f", {len(self.deviations)} above the exact channel (the sampler does not follow its parameters)"
        return (
            f"audit of {self.target} ({self.attack} attack, {len(self.rows)} pairs, "
            f"{self.rows[0].trials if self.rows else 0} trials per input, joint confidence {self.confidence:g}): "
            f"{state}; largest gap to the attack's limit {self.max_gap():.3f}"
        )

    def __str__(self) -> str:
        return self.summary() + "\n" + self.table()

    def plot(self, ax: Any = None) -> Any:
        """Audited against claimed epsilon per pair (exact values as open markers); returns the axes.

        Points on the diagonal are tight audits; a point above it is a pair that leaks more than
        claimed (flagged, drawn in red).
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5.0, 4.2))
        finite = [r for r in self.rows if math.isfinite(r.claimed) and math.isfinite(r.audited)]
        top = max([r.claimed for r in finite] + [r.audited for r in finite] + [r.exact for r in finite] + [1.0])
        ax.plot([0, top * 1.05], [0, top * 1.05], color="0.6", lw=1, ls="--", label="audited = claimed")
        markers = {"item": "o", "item-set": "s", "level": "^"}
        for secret, marker in markers.items():
            rows = [r for r in finite if r.secret == secret]
            if not rows:
                continue
            ok = [r for r in rows if not r.flagged]
            bad = [r for r in rows if r.flagged]
            ax.scatter(
                [r.claimed for r in rows], [r.exact for r in rows], marker=marker, facecolors="none",
                edgecolors="0.4", s=36, label=f"{secret}: exact",
            )  # fmt: skip
            if ok:
                ax.scatter([r.claimed for r in ok], [r.audited for r in ok], marker=marker, color="C0", s=16,
                           label=f"{secret}: audited")  # fmt: skip
            if bad:
                ax.scatter([r.claimed for r in bad], [r.audited for r in bad], marker=marker, color="C3", s=20,
                           label=f"{secret}: audited, above claim")  # fmt: skip
        ax.set_xlabel("claimed ε of the pair")
        ax.set_ylabel("ε")
        ax.set_title(f"{self.attack} attack, {self.confidence:g} joint confidence", fontsize=9)
        ax.legend(fontsize=7, loc="upper left")
        return ax
