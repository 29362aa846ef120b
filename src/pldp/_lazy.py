"""Names of a package loaded on first use (PEP 562), so importing the package costs what is used.

A package lists its public names in ``__all__`` as usual, imports the cheap ones, and hands the
others to :func:`lazy_names` with the module that defines each; a ``TYPE_CHECKING`` block imports
them all for type checkers and IDEs. ``pldp`` itself and :mod:`pldp.privacy` load so: a device
client reads a spec and reports without the estimators or the privacy reports it never runs.

A lazy name must not be the name of one of the package's submodules (``pldp.deploy.decode`` is both
a function and a module): importing the submodule sets the package's attribute of that name to the
module, which ``__getattr__`` never sees; such a name is imported eagerly.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, where: Mapping[str, str], public: Sequence[str], *, subpackages: bool = False
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    where : mapping
        Each lazy name -> the module that defines it (imported on the name's first use).
    public : sequence of str
        The package's ``__all__`` (listed by ``dir()`` before they are loaded).
    subpackages : bool, default False
        Whether any other public name is a submodule, imported on first use (``pldp.theory``).

    Returns
    -------
    (__getattr__, __dir__)
        To assign at the package's module level. A name is imported once: the first use stores it
        in the package's namespace, so later uses are plain attribute reads.
    """
    namespace = sys.modules[package].__dict__

    def load(name: str) -> Any:
        if name in where:
            value = getattr(importlib.import_module(where[name]), name)
        elif subpackages and not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}") is not None:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted(set(namespace) | set(public))

    return load, names
