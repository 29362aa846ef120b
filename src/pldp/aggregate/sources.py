"""Where report files are: paths, URLs that fsspec opens, and directories in the report layout."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pldp.deploy.files import layouts, report_files
from pldp.deploy.spec import Spec
from pldp.errors import ParameterError

__all__ = ["is_url", "report_sources", "url_fs"]


def is_url(source: Any) -> bool:
    return isinstance(source, str) and "://" in source


def url_fs(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path on it."""
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec comes with dask
        raise ParameterError(f"{url}: reading URLs needs fsspec (pip install fsspec)") from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:  # an unknown protocol, or its package missing
        raise ParameterError(f"{url}: cannot open this URL: {exc}") from None


def _expand(spec: Spec, source: str | Path, turn: int | None = None) -> list[str]:
    """A file or URL as itself; a directory as its report files of ``spec`` (the Hive layouts)."""
    if is_url(source):
        url = str(source)
        fs, path = url_fs(url)
        if not fs.isdir(path):
            return [url]
        found = sorted(
            p
            for layout in layouts(spec.id, turn)
            for p in fs.glob(f"{path.rstrip('/')}/{layout}")
            if not posixpath.basename(p).startswith(".")
        )
        files = [fs.unstrip_protocol(p) for p in found]
    else:
        if not Path(source).is_dir():
            if not Path(source).exists():
                raise ParameterError(f"{source}: no such file or folder")
            return [str(source)]
        files = [str(p) for p in report_files(source, spec.id, turn)]
    if not files:
        where = " or ".join(layouts(spec.id, turn))
        raise ParameterError(f"{source}: a directory without report files of spec {spec.id} ({where} under it)")
    return files


def report_sources(spec: Spec, sources: str | Path | Iterable[str | Path], round: int | None = None) -> list[str]:
    """The report files that ``sources`` name, each once, in the order given.

    A source is a file, a URL that fsspec opens (``file://``, ``memory://``, ``s3://``, ...), or a
    directory (local or URL) laid out by :mod:`pldp.deploy.files`, which stands for its files of
    ``spec`` (``spec=<id>/round=<n>/day=*/*.parquet`` and ``spec=<id>/day=*/*.parquet``, sorted;
    with ``round``, only that round's directories of the first layout). A file named twice
    (directly and through its directory, say) is kept once, so it is never counted twice.

    Raises
    ------
    ParameterError
        No source, a path that does not exist, a directory without report files of the spec, or a
        URL that fsspec cannot open.
    """
    if isinstance(sources, (str, Path)):
        sources = [sources]
    files: list[str] = []
    seen: set[str] = set()
    for source in sources:
        for file in _expand(spec, source, round):
            key = file if is_url(file) else str(Path(file).resolve())
            if key not in seen:
                seen.add(key)
                files.append(file)
    if not files:
        raise ParameterError("no report files given")
    return files
