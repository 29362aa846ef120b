"""The ``pldp spec`` and ``pldp clients`` commands: write, verify and exercise campaign specs."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from pldp.cli.errors import CLIError, file_error, read_text
from pldp.cli.options import Subparsers
from pldp.errors import ParameterError

__all__ = ["add_commands"]

MECHANISMS = (
    "krr",
    "urr",
    "iprr",
    "rappor",
    "oue",
    "idue",
    "urap",
    "olh",
    "hr",
    "ss",
    "cms",
    "hcms",
    "ps",
    "febsf",
    "rcf",
    "apldp",
    "pbp",
    "ppda",
    "mpldp",
    "pem",
    "treehist",
    "sfp",
)
#: The heavy-hitter protocols of a free-text spec (``--labels text:L``).
_HEAVY = {"pem": "PEM", "treehist": "TreeHist", "sfp": "SFP"}
#: The item oracles a leveled protocol's levels may use (``--oracle``); each protocol says which it takes.
LEVEL_ORACLES = ("krr", "oue", "rappor", "olh", "hr", "ss")
#: The one-budget large-domain oracles ``spec new`` builds from ``--eps`` alone.
_LARGE = {"olh": "OLH", "hr": "HR", "ss": "SS", "cms": "CMS", "hcms": "HCMS"}


def _numbers(text: str | None, name: str, kind: type[float] | type[int] = float) -> list[Any]:
    if not text:
        raise ParameterError(f"--{name} is required for this mechanism")
    out = []
    for part in text.split(","):
        try:
            out.append(kind(part.strip()))
        except ValueError:
            noun = "an integer" if kind is int else "a number"
            raise ParameterError(f"--{name}: {part.strip()!r} is not {noun} (give comma-separated values)") from None
    return out


def _floats(text: str | None, name: str) -> list[float]:
    return _numbers(text, name, float)


def _parse_labels(text: str, what: str = "--labels") -> list[str]:
    """The labels of ``--labels a,b,c``: stripped of surrounding white space, none empty, none twice.

    Raises
    ------
    CLIError
        An empty label or a label given twice, named with its position.
    """
    labels = [part.strip() for part in text.split(",")]
    for i, label in enumerate(labels):
        if not label:
            raise CLIError(f"{what}: label {i + 1} of {len(labels)} is empty in {text!r}: give non-empty labels, a,b,c")
        if label in labels[:i]:
            raise CLIError(f"{what}: the label {label!r} is given twice in {text!r}: give each answer once")
    return labels


#: The ``--labels FORM:D`` forms that name no labels: what each means.
_COUNTED = {"range": "the answers 0 .. D-1", "hashed": "free text hashed to D buckets"}


def _range_labels(text: str) -> tuple[str, int] | None:
    """The form and ``d`` of ``--labels range:D`` (the answers are the integers ``0 .. D-1``) or
    ``--labels hashed:D`` (free text hashed to D buckets), else None."""
    form, sep, raw = text.strip().partition(":")
    if not sep or form not in _COUNTED:
        return None
    if not raw.strip().isdigit() or int(raw) < 2:
        raise CLIError(f"--labels {text!r}: give {form}:D with D an integer >= 2 ({_COUNTED[form]})")
    return form, int(raw)


def _one(text: float | None, name: str) -> float:
    if text is None:
        raise ParameterError(f"--{name} is required for this mechanism")
    return float(text)


def _oracle(args: argparse.Namespace, d: int) -> Any:
    import pldp
    from pldp.protocols import APLDP, FEBSF, MPLDP, PBP, PPDA, RCF, PaddingSampling

    name = args.name
    if args.hash != "xxh32" and name != "olh":
        raise ParameterError(f"--hash chooses OLH's hash family (spec new olh); {name} has none to choose")
    if name == "krr":
        return pldp.KRR(_one(args.eps, "eps"), d)
    if name == "rappor":
        return pldp.RAPPOR(_one(args.eps, "eps"), d)
    if name == "oue":
        return pldp.OUE(_one(args.eps, "eps"), d)
    if name == "olh":
        return pldp.OLH(_one(args.eps, "eps"), d, hash=args.hash)
    if name in _LARGE:
        return getattr(pldp, _LARGE[name])(_one(args.eps, "eps"), d)
    if name in ("urr", "urap"):
        flags = np.array([v.strip() == "1" for v in (args.sensitive or "").split(",")])
        if flags.size != d:
            raise ParameterError(f"--sensitive needs {d} comma-separated 0/1 flags")
        return (pldp.URR if name == "urr" else pldp.URAP)(_one(args.eps, "eps"), flags)
    if name in ("iprr", "idue"):
        budgets = pldp.ItemBudgets.from_array(_floats(args.budgets, "budgets"))
        if len(budgets.epsilons) != d:
            raise ParameterError(f"--budgets needs one budget per label ({d})")
        if name == "iprr":
            return pldp.IPRR(budgets)
        return pldp.IDUE(budgets, model=args.model, pair_rule=args.pair_rule)
    if name == "ps":
        base_args = argparse.Namespace(**{**vars(args), "name": args.base})
        base = _oracle(base_args, d)
        if args.base == "idue":
            base = pldp.IDUE(base.budgets, model=args.model, pair_rule=args.pair_rule, same_level="always")
        return PaddingSampling(base, args.ell)
    if name == "mpldp":
        return MPLDP(_numbers(args.k, "k", int), _floats(args.eps_list, "eps-list"))
    levels = _floats(args.levels, "levels")
    if name == "febsf":
        return FEBSF(levels, _one(args.eps_p, "eps-p"), d, args.oracle)
    if name == "rcf":
        return RCF(levels, d, args.oracle)
    if name == "apldp":
        return APLDP(levels, d)
    if name == "pbp":
        return PBP(levels, _floats(args.rho, "rho"), d, args.oracle)
    return PPDA(levels, d, oracle=args.oracle if args.oracle != "krr" else "rappor")


def _free_text(args: argparse.Namespace) -> Any:
    """The spec of ``spec new pem|treehist|sfp --labels text:L --eps E`` (or ``--levels``, with ``--level``)."""
    import pldp
    from pldp.deploy import Spec

    form, sep, raw = args.labels.strip().partition(":")
    if form != "text" or not sep or not raw.strip().isdigit():
        raise CLIError(f"{args.name} discovers free text: give --labels text:L, the bytes of an answer kept (1 to 64)")
    eps: Any = _floats(args.levels, "levels") if args.levels else _one(args.eps, "eps")
    own = {"pem": (), "treehist": ("split", "step_bits"), "sfp": ("split", "fragment_bytes", "hash_bits")}[args.name]
    for option in ("split", "step_bits", "fragment_bytes", "hash_bits"):
        if option not in own and getattr(args, option) is not None:
            raise CLIError(f"--{option.replace('_', '-')} is not an option of {args.name}")
    kw: dict[str, Any] = {"max_bytes": int(raw), **{k: getattr(args, k) for k in own if getattr(args, k) is not None}}
    protocol = getattr(pldp, _HEAVY[args.name])(eps, **kw)
    return Spec.from_heavy(protocol, question=args.question.strip(), level=args.level)


def _spec_new(args: argparse.Namespace) -> int:
    from pldp.deploy import Spec

    if args.name in _HEAVY:
        spec = _free_text(args)
    elif args.labels.strip().startswith("text:"):
        raise CLIError(f"--labels text:L is for a free-text spec (pem, treehist, sfp), not {args.name}")
    elif args.name == "mpldp":
        parts = args.labels.split(";")
        labels = [_parse_labels(part, f"--labels (attribute {i + 1})") for i, part in enumerate(parts)]
        question: Any = [q.strip() for q in args.question.split(";")]
        spec = Spec.from_mechanism(_oracle(args, 0), question=question, labels=labels)
    elif (counted := _range_labels(args.labels)) is not None:
        form, d = counted
        spec = Spec.from_mechanism(_oracle(args, d), question=args.question.strip(), labels=form)
    else:
        flat = _parse_labels(args.labels)
        spec = Spec.from_mechanism(_oracle(args, len(flat)), question=args.question.strip(), labels=flat)
    print(spec.to_json())
    return 0


def _spec_verify(args: argparse.Namespace) -> int:
    """Every claim, exactly; and for a memoized spec whose claims hold, both guarantees over a
    device's rounds (:func:`pldp.deploy.history.rounds_guarantees`): its answer at eps_inf each time it
    is new, and whether and when it changes at the whole-history epsilon of the spec's rounds cap
    (or, without one, of a few numbers of reports)."""
    from pldp.deploy import Spec, verify
    from pldp.deploy.claimwords import claims_table
    from pldp.deploy.history import rounds_guarantees
    from pldp.deploy.spec import read_spec
    from pldp.errors import SpecError

    text = read_text(args.spec, "spec file")
    result = verify(text)
    rounds, why = None, ""
    if result.holds and read_spec(text)[0].memoized:
        try:
            rounds = rounds_guarantees(Spec.from_json(text))
        except SpecError as exc:  # its claims hold, yet it does not load (its oracle, say)
            why = f"The spec does not load ({exc}): its guarantees over rounds are not shown."
    if args.json:
        out = result.to_dict()
        if rounds is not None:
            out["rounds"] = rounds.to_dict()
        print(json.dumps(out, indent=2))
    else:
        print(claims_table(json.loads(text), result))
        if rounds is not None or why:
            print("\n".join(["", *(rounds.lines() if rounds is not None else [why])]))
    return 0 if result.holds else 1


def _read_answers(path: str, spec: Any) -> tuple[list[Any], dict[str, Any]]:
    """answers.csv: a column ``answer`` (labels; ``;`` between the items of a set), optionally
    ``level``; for several attributes ``answer0, answer1, ...`` and ``level0, level1, ...``."""
    rows = list(csv.DictReader(io.StringIO(read_text(path, "--answers"), newline="")))
    if not rows:
        raise ParameterError(f"{path} holds no answers")
    root = spec.root
    kw: dict[str, Any] = {}

    def column(name: str) -> list[str]:
        if name not in rows[0]:
            raise ParameterError(f"{path} needs a column named {name!r} (it has {', '.join(map(repr, rows[0]))})")
        values = [r[name] for r in rows]
        if any(v is None for v in values):
            raise ParameterError(f"{path}: a row has no value in column {name!r}")
        return [v.strip() for v in values]

    def integers(name: str) -> np.ndarray:
        try:
            return np.array([int(v) for v in column(name)])
        except ValueError:
            raise ParameterError(f"{path}: column {name!r} must hold integers (budget levels)") from None

    if root.multi_attribute:
        k = len(root.by_attribute)
        answers: list[Any] = [list(row) for row in zip(*(column(f"answer{i}") for i in range(k)), strict=True)]
        if "level0" in rows[0]:
            kw["levels"] = np.stack([integers(f"level{i}") for i in range(k)], axis=1)
        return answers, kw
    if root.takes_itemsets:
        answers = [[v.strip() for v in a.split(";") if v.strip()] for a in column("answer")]
    else:
        answers = column("answer")
    if "level" in rows[0]:
        kw["level"] = integers("level")
    return answers, kw


def _clients_simulate(args: argparse.Namespace) -> int:
    from pldp.client import Client
    from pldp.deploy import Spec

    spec = Spec.from_json(read_text(args.spec, "spec file"))
    out = Path(args.out)
    if out.suffix not in (".parquet", ".jsonl", ".json"):
        raise CLIError(f"--out {args.out}: name a .parquet, .jsonl or .json file")
    if spec.root.memoized:  # one client is one device: its memo would be every row's
        raise CLIError("clients simulate makes each row a device of its own; a memoized spec needs a memo per device")
    answers, kw = _read_answers(args.answers, spec)
    batch = Client(spec).reports(answers, **kw)
    try:
        if out.suffix == ".parquet":
            import pyarrow.parquet as pq

            pq.write_table(batch.to_arrow(), str(out))
        elif out.suffix == ".jsonl":
            out.write_text(batch.to_json_lines())
        else:
            out.write_text(json.dumps(batch.to_json()))
    except OSError as exc:  # a missing directory, no permission (pyarrow names no file: say which)
        raise file_error("--out", out, exc, "write") from None
    print(f"{len(batch)} reports of spec {spec.id} -> {out}", file=sys.stderr)
    return 0


def add_commands(sub: Subparsers) -> None:
    """Add ``spec new``, ``spec verify`` and ``clients simulate`` to the ``pldp`` parser."""
    spec = sub.add_parser("spec", help="campaign specs: write one, verify one exactly")
    spec_sub = spec.add_subparsers(dest="action", required=True)
    new = spec_sub.add_parser("new", help="print the spec of a mechanism or protocol (JSON)")
    new.add_argument("name", choices=MECHANISMS)
    new.add_argument(
        "--labels",
        required=True,
        help="answers, comma-separated, each once (white space around them dropped; mpldp: ';' between "
        "attributes), range:D for the integers 0 .. D-1 without labels (large domains), hashed:D for free "
        "text hashed to D buckets, or text:L for free text whose frequent answers pem, treehist and sfp discover "
        "(L bytes of an answer kept)",
    )
    new.add_argument("--question", required=True, help="the question (mpldp: ';' between attributes)")
    new.add_argument(
        "--eps",
        type=float,
        default=None,
        help="budget (krr, urr, urap, rappor, oue, olh, hr, ss, cms, hcms; ps with those bases)",
    )
    new.add_argument("--budgets", default=None, help="iprr/idue: one budget per label, inf = non-sensitive")
    new.add_argument("--sensitive", default=None, help="urr, urap: comma-separated 0/1 flags per label")
    new.add_argument("--model", default="opt0", choices=["opt0", "opt1", "opt2"], help="idue model")
    new.add_argument("--pair-rule", default="min", choices=["min", "avg"], help="idue notion")
    new.add_argument("--base", default="oue", choices=["oue", "rappor", "idue"], help="ps: the unary mechanism")
    new.add_argument("--ell", type=int, default=2, help="ps: padding length")
    new.add_argument("--levels", default=None, help="leveled protocols: budget levels, comma-separated")
    new.add_argument("--eps-p", type=float, default=None, help="febsf: budget of the level report")
    new.add_argument(
        "--oracle",
        default="krr",
        choices=LEVEL_ORACLES,
        help="item oracle of the levels (olh, hr, ss: rcf and pbp)",
    )
    new.add_argument(
        "--hash",
        default="xxh32",
        choices=["xxh32", "toeplitz"],
        help="olh: the hash family (toeplitz: g a power of two, exactly pairwise independent, a fast server)",
    )
    new.add_argument("--rho", default=None, help="pbp: public level shares")
    new.add_argument("--k", default=None, help="mpldp: values per attribute")
    new.add_argument("--eps-list", default=None, help="mpldp: budget per attribute")
    new.add_argument("--level", type=int, default=0, help="pem, treehist, sfp with --levels: the level of this spec")
    new.add_argument(
        "--split", type=float, default=None, help="treehist, sfp: the prefix or fragment's share of eps (default 0.5)"
    )
    new.add_argument(
        "--step-bits", type=int, default=None, choices=[1, 2, 4, 8], help="treehist: bits per depth (default 8)"
    )
    new.add_argument("--fragment-bytes", type=int, default=None, help="sfp: bytes of a fragment (default 2)")
    new.add_argument("--hash-bits", type=int, default=None, help="sfp: bits of the hash tagging a fragment (default 8)")
    new.set_defaults(func=_spec_new)
    ver = spec_sub.add_parser(
        "verify",
        help="check every privacy claim exactly (exit 1 when one fails); a memoized spec's guarantees over its rounds",
    )
    ver.add_argument("spec", help="spec.json")
    ver.add_argument("--json", action="store_true", help="machine-readable output")
    ver.set_defaults(func=_spec_verify)

    cl = sub.add_parser("clients", help="run the spec's clients")
    cl_sub = cl.add_subparsers(dest="action", required=True)
    sim = cl_sub.add_parser("simulate", help="the reports a population's clients would send (OS randomness)")
    sim.add_argument("spec", help="spec.json")
    sim.add_argument("--answers", required=True, help="answers.csv (column 'answer', optionally 'level')")
    sim.add_argument("--out", required=True, help="reports.parquet, reports.jsonl or reports.json (a batch)")
    sim.set_defaults(func=_clients_simulate)
