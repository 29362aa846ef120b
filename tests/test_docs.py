"""The documentation says what the code does: every cited erratum is explained, every test a page
names exists, and every internal link of the Markdown pages points to a file of the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ERRATA = ROOT / "docs" / "errata.md"
PAGES = sorted(
    [ROOT / "README.md", ROOT / "REPRODUCTION.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("benchmarks/*.md")]
)
SOURCES = [*ROOT.glob("src/**/*.py"), *ROOT.glob("tests/**/*.py"), *ROOT.glob("docs/**/*.md"), ROOT / "REPRODUCTION.md"]


def test_every_cited_erratum_is_explained() -> None:
    cited = {m for path in SOURCES for m in re.findall(r"ERRATA ([A-Z]+-\d+)", path.read_text(encoding="utf-8"))}
    explained = set(re.findall(r"^### ([A-Z]+-\d+)$", ERRATA.read_text(encoding="utf-8"), re.M))
    assert cited, "no erratum is cited"
    assert cited <= explained, f"cited but not explained in docs/errata.md: {sorted(cited - explained)}"


def test_every_erratum_names_tests_that_exist() -> None:
    text = ERRATA.read_text(encoding="utf-8")
    named = re.findall(r"`(tests/[\w/]+\.py)::(test_\w+)`", text)
    assert len(named) >= 20
    for path, name in named:
        source = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {name}\(", source, re.M), f"{path}::{name} named in docs/errata.md does not exist"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_internal_links_point_to_files(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links to a missing file: {target}"
