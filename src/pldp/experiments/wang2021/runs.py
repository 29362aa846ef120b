"""Wang, Li & Jha 2021 experiments: the populations, the three protocols, and one repeat of each experiment.

A repeat draws its users' answers (Zipf over a fixed vocabulary, or Kosarak's users' first items as
text), runs each protocol's ``perturb`` and ``discover(top=k)`` on them, and compares the answers
found with the true top ``k``: *precision*, the share of the returned answers that are in the true
top ``k`` (an empty discovery has precision 0); *recall*, the share of the true top ``k`` that is
returned; and the mean relative error :math:`|\\hat f - f| / f` of the estimates of the answers
found correctly (NaN where none is). SFP raises :class:`~pldp.errors.EstimationError` when its
puzzle assembles no word: that repeat found nothing (precision and recall 0).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from pldp.datasets import real
from pldp.errors import EstimationError
from pldp.heavy import PEM, SFP, TreeHist

__all__ = [
    "PAPER",
    "PROTOCOLS",
    "VOCABULARY_SEED",
    "first_item_answers",
    "identify",
    "protocol",
    "run_kosarak",
    "run_zipf",
    "vocabulary",
]

PAPER = "wang2021"
#: The protocols compared: PEM (the paper's), TreeHist (Bassily et al.) and SFP (Apple's).
PROTOCOLS: tuple[str, ...] = ("PEM", "TreeHist", "SFP")
#: The seed of the Zipf experiment's vocabulary: the same words in every repeat and setting.
VOCABULARY_SEED = 20210301
#: SFP's fragment and tag: one byte a fragment and an 8-bit hash (``d_F = 2**16`` items a position), so
#: that any ``max_bytes`` is a multiple of the fragment and the puzzle's transforms stay small.
SFP_FRAGMENT_BYTES, SFP_HASH_BITS = 1, 8


def protocol(name: str, epsilon: float, max_bytes: int) -> PEM | TreeHist | SFP:
    """The protocol ``name`` (one of :data:`PROTOCOLS`) at ``epsilon`` over answers of ``max_bytes`` bytes;
    TreeHist a byte a step and SFP (:data:`SFP_FRAGMENT_BYTES`, :data:`SFP_HASH_BITS`) split the budget in half."""
    if name == "PEM":
        return PEM(epsilon, max_bytes)
    if name == "TreeHist":
        return TreeHist(epsilon, max_bytes, step_bits=8)
    if name == "SFP":
        return SFP(epsilon, max_bytes, fragment_bytes=SFP_FRAGMENT_BYTES, hash_bits=SFP_HASH_BITS)
    raise KeyError(name)


@functools.cache
def vocabulary(words: int, max_bytes: int) -> tuple[str, ...]:
    """``words`` distinct random lower-case words of 3 to ``max_bytes`` letters, from :data:`VOCABULARY_SEED`,
    in a random order (the Zipf ranks)."""
    rng = np.random.default_rng(VOCABULARY_SEED)
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    seen: dict[str, None] = {}
    while len(seen) < words:
        length = int(rng.integers(3, max_bytes + 1))
        seen[bytes(rng.choice(letters, length)).decode("ascii")] = None
    return tuple(seen)


def identify(
    answers: list[str], truth: dict[str, float], epsilon: float, max_bytes: int, top: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """Per protocol: precision and recall of the true top ``top`` (``truth``: answer -> share) and the
    mean relative error of the correctly found answers' estimates (module docstring)."""
    rows = []
    for name in PROTOCOLS:
        proto = protocol(name, epsilon, max_bytes)
        reports = proto.perturb(answers, rng)
        try:
            found = proto.discover(reports, top=top)
            labels, est = found.answers, found.estimate.frequencies
        except EstimationError:  # SFP: no word assembled
            labels, est = [], np.zeros(0)
        hits = [(str(a), float(f)) for a, f in zip(labels, est, strict=True) if str(a) in truth]
        errors = [abs(f - truth[a]) / truth[a] for a, f in hits]
        rows.append(
            {
                "method": name,
                "precision": len(hits) / len(labels) if labels else 0.0,
                "recall": len(hits) / len(truth),
                "relative_error": float(np.mean(errors)) if errors else math.nan,
                "returned": len(labels),
            }
        )
    return rows


def _truth(counts: np.ndarray, labels: Any, top: int) -> dict[str, float]:
    """The ``top`` most frequent answers (ties broken by index) and their shares."""
    n = int(counts.sum())
    return {str(labels[i]): float(counts[i]) / n for i in np.argsort(-counts, kind="stable")[:top]}


def run_zipf(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat on synthetic data: ``n`` users i.i.d. Zipf(``s``) over :func:`vocabulary` (``words``
    words of at most ``max_bytes`` bytes), every protocol at ``epsilon`` asked for the ``top`` answers.

    Rows: ``method``, ``precision``, ``recall``, ``relative_error``, ``returned`` (:func:`identify`)."""
    n, words, max_bytes, top = (int(setting[k]) for k in ("n", "words", "max_bytes", "top"))
    vocab = vocabulary(words, max_bytes)
    p = 1.0 / np.arange(1, words + 1) ** float(setting["s"])
    x = rng.choice(words, size=n, p=p / p.sum())
    truth = _truth(np.bincount(x, minlength=words), vocab, top)
    return identify([vocab[i] for i in x], truth, float(setting["epsilon"]), max_bytes, top, rng)


@functools.cache
def first_item_answers(source: str | None = None) -> tuple[tuple[str, ...], np.ndarray]:
    """Each Kosarak user's first item as text (its original id; ``source``: the full file in place of
    the bundled prefix), and the users per item (read-only)."""
    sets = real.load_kosarak(source)
    labels = real.item_labels("kosarak", source)
    first = sets.first_items()
    counts = np.bincount(first, minlength=sets.d)
    counts.setflags(write=False)
    return tuple(str(labels[i]) for i in first), counts


def run_kosarak(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat on Kosarak's users' first items as text (ids of at most ``max_bytes`` digits): every
    protocol at ``epsilon`` asked for the ``top`` answers; rows as :func:`run_zipf`'s, with the users ``n``."""
    answers, counts = first_item_answers(setting.get("source"))
    max_bytes, top = int(setting["max_bytes"]), int(setting["top"])
    truth = _truth(counts, real.item_labels("kosarak", setting.get("source")), top)
    rows = identify(list(answers), truth, float(setting["epsilon"]), max_bytes, top, rng)
    return [{**row, "n": len(answers)} for row in rows]
