"""pldp's PEM, TreeHist and SFP beside pure-ldp 1.2.0's on identical users: precision and recall of the
top 10 with confidence bands over seeds, and server time.

Users hold 2-byte words: 200 random pairs of letters, Zipf(1.1); and, with the ``wordfreq`` package
installed (the bench environment; its word lists are what it ships: Speer, *wordfreq* 3), the
English words of two lowercase letters among its 20,000 most frequent, drawn at their frequency in
English (411 words, "to" 16 %, "of" 15 %, "in" 11 %). ε = 4; top 10. Both libraries run
each protocol with one byte per step or fragment, over local hashing:

* PEM: pure-ldp ``PEMClient``/``PEMServer(epsilon, 0, 16, 8)`` over the words' bit strings (its
  default OLH oracle); pldp ``PEM(4, max_bytes=2)``.
* TreeHist: pure-ldp ``TreeHistClient(epsilon, 8, 16)``/``TreeHistServer(epsilon, 16, 8)`` with an
  OLH oracle at ε/2 over ``2^16`` items passed in (its default oracle is built with ``d=None`` and
  fails on construction); pldp ``TreeHist(4, max_bytes=2)`` (bytes a step, the budget split evenly).
* SFP: pure-ldp ``SFPClient(epsilon, 1, 2)``/``SFPServer(epsilon, 1, 2)`` over the letters (fragments
  of one letter, a 256-value hash) with Apple's count mean sketch at ε/2 (``CMSServer(ε/2, 256,
  1024)``, the only oracle its SFP takes: it reads ``sketch_based``, which only its sketches define).
  Its sketch servers call ``np.zeros(None)``, which numpy 2 refuses; the benchmark builds them with
  that call read as numpy 1 read it (:func:`_zeros_of_none`). Over the words' bits instead, its SFP
  counts the padding as a letter (fragments over ``{0, 1, *}^8``) and spends ten minutes estimating
  them for 300 users. pldp ``SFP(4, max_bytes=2, fragment_bytes=1)``.

Each library runs every protocol over seeded repeats (pldp: :data:`REPEATS_PLDP`; pure-ldp, whose
servers loop in Python over the ``2^16`` items for every report, :data:`REPEATS_PURE`); a row gives
the mean precision and recall and their 95 % bands, ``mean ± 1.96 sd / sqrt(repeats)``. pldp is
"at least as good" when its mean recall is at or above the lower end of pure-ldp's band. Two bytes
is as far as pure-ldp goes here: its ``PEMServer`` allocates ``2^(8L)`` floats per group (32 GiB
at L = 4), and its OLH ``aggregate`` loops over the ``2^(8L)`` items in Python for every report
(3,000 users at L = 2 take about 36 s for PEM and 160 s for TreeHist).

A suite of ``run.py`` (``--only peers_heavy``; needs the ``bench`` extra); also standalone::

    PYTHONPATH=src:benchmarks <bench venv>/bin/python benchmarks/heavy_peers.py [--quick] [PROTOCOL ...] [CORPUS ...]

(``CORPUS``: ``zipf``, the default, and ``wordfreq``; ``run.py`` runs both.)
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import contextlib
import importlib.metadata
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import pldp
from adapters import seed_pure_ldp
from harness import SEED, Mode, Row

N, WORDS, EPS, TOP = 3_000, 200, 4.0, 10
REPEATS_PLDP, REPEATS_PURE, REPEATS_QUICK = 20, 5, 1
#: The pure-ldp oracle's items: every 16-bit string (the words' bits).
BITS_D = 2**16
#: pure-ldp's SFP sketch (Apple's count mean sketch, the only oracle its SFP takes): hash functions, columns.
CMS_K, CMS_M = 256, 1024


#: The populations: how each is described in a row.
CORPORA = {
    "zipf": f"{WORDS} two-letter words (Zipf(1.1))",
    "wordfreq": "English two-letter words at their frequency (wordfreq)",
}


def _population(rng: np.random.Generator, corpus: str = "zipf") -> tuple[list[str], list[str]]:
    """``N`` answers over two-letter words, :data:`WORDS` of them at Zipf(1.1) or English's (``wordfreq``),
    and the true top :data:`TOP`."""
    if corpus == "wordfreq":
        import wordfreq

        words = [w for w in wordfreq.top_n_list("en", 20_000) if len(w) == 2 and w.isascii() and w.isalpha()]
        words = [w for w in words if w.islower()]
        p = np.array([wordfreq.word_frequency(w, "en") for w in words])
    else:
        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        words = sorted({"".join(rng.choice(letters, 2)) for _ in range(2 * WORDS)})[:WORDS]
        p = 1.0 / np.arange(1, WORDS + 1) ** 1.1
    x = rng.choice(len(words), size=N, p=p / p.sum())
    counts = np.bincount(x, minlength=len(words))
    return [words[i] for i in x], [words[i] for i in np.argsort(-counts, kind="stable")[:TOP]]


def _pure_pair(protocol: str) -> tuple[Any, Any]:
    """pure-ldp's client and server of ``protocol`` at :data:`EPS`, a byte a step over 16-bit strings."""
    from pure_ldp.frequency_oracles.local_hashing import LHClient, LHServer

    if protocol == "PEM":
        from pure_ldp.heavy_hitters.prefix_extending.pem_client import PEMClient
        from pure_ldp.heavy_hitters.prefix_extending.pem_server import PEMServer

        return PEMClient(EPS, 0, 16, 8), PEMServer(EPS, 0, 16, 8)
    half = EPS / 2
    if protocol == "TreeHist":
        from pure_ldp.heavy_hitters.treehistogram.treehist_client import TreeHistClient
        from pure_ldp.heavy_hitters.treehistogram.treehist_server import TreeHistServer

        return (
            TreeHistClient(EPS, 8, 16, fo_client=LHClient(half, BITS_D, use_olh=True)),
            TreeHistServer(EPS, 16, 8, fo_server=LHServer(half, BITS_D, use_olh=True)),
        )
    from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer
    from pure_ldp.heavy_hitters.apple_sfp.sfp_client import SFPClient
    from pure_ldp.heavy_hitters.apple_sfp.sfp_server import SFPServer

    letters = set("abcdefghijklmnopqrstuvwxyz")  # a set: its server adds the padding character to it
    with _zeros_of_none():
        server = CMSServer(half, CMS_K, CMS_M)
        client = CMSClient(half, server.get_hash_funcs(), CMS_M)
        return (
            SFPClient(EPS, 1, 2, alphabet=letters, fo_client=client),
            SFPServer(EPS, 1, 2, alphabet=set(letters), fo_server=server),
        )


@contextlib.contextmanager
def _zeros_of_none() -> Iterator[None]:
    """pure-ldp's frequency-oracle servers as numpy 1 built them: their base class calls ``np.zeros(None)``
    for a server with no ``d`` (its sketches), which numpy 1 read as ``np.zeros(())`` and numpy 2
    refuses; inside, that module's ``np.zeros`` reads ``None`` as ``()``."""
    import pure_ldp.core._freq_oracle_server as base

    real = base.np

    class _Numpy:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        @staticmethod
        def zeros(shape: Any, *args: Any, **kwargs: Any) -> np.ndarray:
            return real.zeros(() if shape is None else shape, *args, **kwargs)

    base.np = _Numpy()
    try:
        yield
    finally:
        base.np = real


def _pure_ldp(protocol: str, answers: list[str], seed: int) -> tuple[list[Any], float]:
    """pure-ldp's top :data:`TOP` of ``answers`` by ``protocol`` and its server's seconds (aggregate + find)."""
    seed_pure_ldp(seed)
    client, server = _pure_pair(protocol)
    chars = protocol == "SFP"  # its SFP runs over letters, the others over the answers' bits
    reports = [client.privatise(a if chars else "".join(f"{b:08b}" for b in a.encode())) for a in answers]

    def serve() -> Any:
        for r in reports:
            server.aggregate(r)
        return server.find_heavy_hitters(k=TOP)[0]

    found, t = harness.once(serve)
    return [_text(h) for h in found], t.best


def _text(bits: str) -> str:
    """A bit string pure-ldp found, as the text it stands for (as it is when it holds padding, ``*``)."""
    if set(bits) - {"0", "1"} or len(bits) % 8:
        return bits
    return bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8)).decode(errors="replace")


#: pldp's protocol of each name, as the table runs it.
PLDP: dict[str, Callable[[], Any]] = {
    "PEM": lambda: pldp.PEM(EPS, max_bytes=2),
    "TreeHist": lambda: pldp.TreeHist(EPS, max_bytes=2),
    "SFP": lambda: pldp.SFP(EPS, max_bytes=2, fragment_bytes=1),
}


def _pldp(protocol: str, answers: list[str], seed: int) -> tuple[list[Any], float]:
    proto = PLDP[protocol]()
    reports = proto.perturb(answers, np.random.default_rng(seed))
    found, t = harness.once(lambda: proto.discover(reports, top=TOP))
    return found.answers, t.best


def _band(values: list[float]) -> tuple[float, float, float]:
    """Mean and its 95 % band, ``mean ± 1.96 sd / sqrt(k)`` (0 wide for one value)."""
    v = np.asarray(values, dtype=float)
    half = 1.96 * float(v.std(ddof=1)) / np.sqrt(v.size) if v.size > 1 else 0.0
    return float(v.mean()), float(v.mean()) - half, float(v.mean()) + half


def bench_heavy_peers(
    mode: Mode, rng: np.random.Generator, protocols: tuple[str, ...] = tuple(PLDP), corpora: tuple[str, ...] = ("zipf",)
) -> list[Row]:
    """Per protocol, one row per library: precision and recall of the top 10 with their bands, server time.

    Parameters
    ----------
    mode : Mode
        Quick (one repeat each) or full (:data:`REPEATS_PLDP` and :data:`REPEATS_PURE`).
    rng : numpy.random.Generator
        Unused (the population and every repeat are seeded from :data:`harness.SEED`).
    protocols : tuple of str
        The protocols run.
    corpora : tuple of str
        The populations (:data:`CORPORA`; ``"wordfreq"`` is skipped, with a row saying so, without
        the package).

    Returns
    -------
    list of Row
        pldp's row, then pure-ldp's, per protocol (or one ``skipped`` row without pure-ldp).
    """
    try:
        version = importlib.metadata.version("pure-ldp")
    except importlib.metadata.PackageNotFoundError as exc:
        return [Row("vs pure-ldp heavy hitters: skipped", f"pure-ldp is not installed ({exc})", None, None, "", "-")]
    rows = []
    for corpus in corpora:
        try:
            answers, truth = _population(np.random.default_rng(SEED), corpus)
        except ImportError as exc:
            rows.append(Row(f"vs pure-ldp heavy hitters ({corpus}): skipped", str(exc), None, None, "", "-"))
            continue
        rows += _corpus_rows(mode, protocols, corpus, answers, truth, version)
    return rows


def _corpus_rows(
    mode: Mode, protocols: tuple[str, ...], corpus: str, answers: list[str], truth: list[str], version: str
) -> list[Row]:
    """pldp's row, then pure-ldp's, per protocol, on one population."""
    rows = []
    for protocol in protocols:
        bands = {}
        for lib, run, repeats in (("pldp", _pldp, REPEATS_PLDP), ("pure-ldp", _pure_ldp, REPEATS_PURE)):
            repeats = REPEATS_QUICK if mode.name == "quick" else repeats
            found, times = zip(*(run(protocol, answers, SEED + r) for r in range(repeats)), strict=True)
            hits = [len(set(f) & set(truth)) for f in found]
            precision = _band([h / max(len(f), 1) for h, f in zip(hits, found, strict=True)])
            recall = _band([h / TOP for h in hits])
            bands[lib] = recall
            name = f"pldp {pldp.__version__}" if lib == "pldp" else f"pure-ldp {version}"
            verdict = ""
            if lib == "pure-ldp":
                verdict = "; pldp at least as good" if bands["pldp"][0] >= recall[1] else "; pldp WORSE"
            rows.append(
                Row(
                    f"vs pure-ldp {protocol}: top 10",
                    f"{name}, {N:,} users, {CORPORA[corpus]}, ε={EPS:g}, a byte a step, "
                    f"{repeats} seeded repeats: hits {list(hits)}",
                    min(times),
                    recall[0],
                    "recall",
                    f"precision {precision[0]:.2f} [{precision[1]:.2f}, {precision[2]:.2f}], recall {recall[0]:.2f} "
                    f"[{recall[1]:.2f}, {recall[2]:.2f}]; server {min(times):.3g} s{verdict}",
                    "-",
                    None,
                    extra={"precision": precision, "recall": recall, "server_s": list(times), "hits": hits},
                )
            )
    return rows


if __name__ == "__main__":
    chosen = harness.QUICK if "--quick" in sys.argv else harness.FULL
    only = tuple(a for a in sys.argv[1:] if a in PLDP) or tuple(PLDP)
    corpora = tuple(c for c in CORPORA if c in sys.argv[1:]) or ("zipf",)
    table = bench_heavy_peers(chosen, np.random.default_rng(SEED), only, corpora)
    print(harness.markdown(table, f"Heavy hitters beside pure-ldp ({chosen.name} mode)"), end="")
