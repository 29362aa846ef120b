"""The declared dependencies of pldp (pyproject.toml): their lower bounds, and the versions installed.

``python .ci/deps.py lower EXTRA...``
    a pip constraints file pinning every dependency of the core and of the named extras that has a
    lower bound (``name>=X``) to exactly ``X``: ``make test-oldest`` installs with it, so the tests
    run on the oldest versions pldp claims to support.
``python .ci/deps.py versions EXTRA...``
    one line per declared dependency with the version installed in this interpreter's environment
    (and the Python version): ``.ci/run`` prints it for both environments, so a CI log says what ran.

Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
#: A requirement with a lower bound: name, extras and the bound (any other clause is kept out).
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*(\[[^\]]*\])?\s*(.*)$")


def requirements(extras: list[str]) -> list[str]:
    """The core requirements and those of ``extras`` (following ``pldp[...]`` self-references)."""
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    optional: dict[str, list[str]] = project["optional-dependencies"]
    out, todo, seen = list(project["dependencies"]), list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        if extra not in optional:
            raise SystemExit(f"deps.py: no extra {extra!r} in pyproject.toml (there are {sorted(optional)})")
        seen.add(extra)
        for req in optional[extra]:
            name, inner, _ = REQUIREMENT.match(req).groups()  # type: ignore[union-attr]
            if name == project["name"]:
                todo += [e.strip() for e in (inner or "[]")[1:-1].split(",") if e.strip()]
            else:
                out.append(req)
    return out


def lower_bounds(extras: list[str]) -> dict[str, str]:
    """Each requirement's name and its lower bound ``>=X``, where it has one."""
    bounds: dict[str, str] = {}
    for req in requirements(extras):
        name, _, spec = REQUIREMENT.match(req).groups()  # type: ignore[union-attr]
        found = re.search(r">=\s*([0-9][A-Za-z0-9.]*)", spec)
        if found:
            key = name.lower().replace("_", "-")
            if key in bounds and bounds[key] != found.group(1):
                raise SystemExit(f"deps.py: {name} has two lower bounds, {bounds[key]} and {found.group(1)}")
            bounds[key] = found.group(1)
    return bounds


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("lower", "versions"):
        print(__doc__, file=sys.stderr)
        return 2
    command, extras = argv[0], argv[1:]
    if command == "lower":
        for name, version in sorted(lower_bounds(extras).items()):
            print(f"{name}=={version}")
        return 0
    print(f"python=={sys.version.split()[0]}")
    names = sorted({REQUIREMENT.match(r).group(1).lower() for r in requirements(extras)})  # type: ignore[union-attr]
    for name in names:
        try:
            print(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            print(f"{name}: not installed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
