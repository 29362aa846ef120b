"""Sphinx helpers of the pldp site.

* :func:`api_entries`: for every documented module, the public names of its ``__all__``, each at
  one canonical path (a name re-exported by several modules is documented once, at the most
  specific public module; the other modules' tables link to that page).
* ``missing-reference``: a Python cross-reference to a private path (``pldp.mechanisms.base.X``,
  as in "Bases:" lines) or to a short name documented exactly once is resolved to its public page.
* The ``openapi`` directive: the collector's OpenAPI schema, built at build time from
  :func:`pldp.service.app.create_app` on a temporary store, written to ``_static/openapi.json`` and
  rendered as reStructuredText (every path, method, parameter, body and response).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from sphinx.util.nodes import nested_parse_with_titles

#: Documented modules, least specific first. Service submodules are reached from ``pldp.service``.
MODULES = [
    "pldp",
    "pldp.mechanisms",
    "pldp.protocols",
    "pldp.estimation",
    "pldp.privacy",
    "pldp.theory",
    "pldp.robustness",
    "pldp.attacks",
    "pldp.attacks.pure",
    "pldp.attacks.leveled",
    "pldp.metrics",
    "pldp.channel",
    "pldp.registry",
    "pldp.datasets",
    "pldp.client",
    "pldp.deploy",
    "pldp.deploy.remote",
    "pldp.aggregate",
    "pldp.audit",
    "pldp.testing",
    "pldp.service",
    "pldp.service.app",
    "pldp.service.server",
    "pldp.service.rollover",
    "pldp.service.dayfiles",
    "pldp.cli.options",
]
#: Modules without ``__all__``: their documented members.
EXTRA = {
    "pldp.service": [
        "pldp.service.app",
        "pldp.service.server",
        "pldp.service.rollover",
        "pldp.service.dayfiles",
    ]
}
KINDS = ["Modules", "Classes", "Exceptions", "Functions", "Data"]


def _kind(obj: Any) -> str:
    if isinstance(obj, ModuleType):
        return "Modules"
    if inspect.isclass(obj):
        return "Exceptions" if issubclass(obj, BaseException) else "Classes"
    if inspect.isroutine(obj) or inspect.isfunction(inspect.unwrap(obj)):  # also lru_cache-wrapped
        return "Functions"
    return "Data"


def _key(obj: Any, name: str) -> tuple[int, str]:
    # classes, functions and modules are the same object wherever re-exported; data only with its name
    return (id(obj), "" if _kind(obj) != "Data" else name)


def canonical() -> dict[tuple[int, str], str]:
    """The public path of every documented object, keyed by identity."""
    where: dict[tuple[int, str], list[str]] = {}
    objects: dict[tuple[int, str], Any] = {}
    for modname in MODULES:
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            key = _key(obj, name)
            objects[key] = obj
            where.setdefault(key, []).append(f"{modname}.{name}")
    out = {}
    for key, paths in where.items():
        obj = objects[key]
        if isinstance(obj, ModuleType):
            out[key] = obj.__name__
            continue
        home = getattr(obj, "__module__", "") or ""
        # the most specific module that exports it; among equals, the one its code lives under
        paths.sort(key=lambda p: (p.count("."), home.startswith(p.rsplit(".", 1)[0])), reverse=True)
        out[key] = paths[0]
    return out


def api_entries() -> dict[str, dict[str, list[str]]]:
    """``{module: {kind: [canonical names]}}`` for the autosummary module template."""
    paths = canonical()
    entries: dict[str, dict[str, list[str]]] = {}
    for modname in MODULES:
        module = importlib.import_module(modname)
        groups: dict[str, list[str]] = {k: [] for k in KINDS}
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            groups[_kind(obj)].append(paths[_key(obj, name)])
        groups["Modules"] += EXTRA.get(modname, [])
        entries[modname] = {k: v for k, v in groups.items() if v}
    return entries


# --- cross-references ---------------------------------------------------------------------------------


def _lookup(target: str) -> Any:
    parts = target.split(".")
    if not all(parts):
        return None
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _exists(path: str) -> bool:
    """Whether ``path`` names a real pldp object: a module, a module's name, or a class's
    attribute (also a dataclass field or instance attribute documented under Attributes)."""
    if not path.startswith("pldp."):
        return False
    if _lookup(path) is not None:
        return True
    owner_path, _, attr = path.rpartition(".")
    owner = _lookup(owner_path)
    if not inspect.isclass(owner):
        return False
    for klass in owner.__mro__:
        if attr in getattr(klass, "__annotations__", {}) or attr in getattr(klass, "__slots__", ()):
            return True
        doc = klass.__dict__.get("__doc__") or ""
        if re.search(
            rf"^\s*{re.escape(attr)}(\s*:.*)?$", doc.split("Attributes\n", 1)[-1] if "Attributes\n" in doc else "", re.M
        ):
            return True
    return False


def _missing_reference(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"]
    domain = env.get_domain("py")
    objects = domain.objects
    candidates: list[str] = []
    paths = app.pldp_canonical
    if target.startswith("pldp."):
        parts = target.split(".")
        for i in range(len(parts), 1, -1):
            obj = _lookup(".".join(parts[:i]))
            if obj is None:
                continue
            for key in ((id(obj), ""), (id(obj), parts[i - 1])):
                if key in paths:
                    candidates = [".".join([paths[key], *parts[i:]])]
                    break
            if candidates:
                break
    elif target.count(".") <= 1:
        suffix = "." + target
        candidates = sorted({name for name in objects if name.endswith(suffix) and not objects[name].aliased})
    candidates = [c for c in candidates if c in objects]
    if len(candidates) != 1:
        # not on the site: a real but private object (pldp.estimation.pure.estimate_counts, a
        # helper named from its own module) is named as plain text; anything else stays a warning
        module, cls = node.get("py:module") or "", node.get("py:class") or ""
        bases = [f"{module}.{cls}" if cls else "", module]
        page = _lookup(node["refdoc"].rsplit("/", 1)[-1]) if node["refdoc"].startswith("api/generated/") else None
        if page is not None:  # the documented object's own module and class
            owner = page if inspect.isclass(page) else getattr(page, "__objclass__", None)
            bases += [
                getattr(page, "__module__", None) or "",
                f"{owner.__module__}.{owner.__qualname__}" if owner else "",
            ]
        name = target.lstrip("~.")
        if any(_exists(f"{base}.{name}" if base else name) for base in [*bases, ""]):
            return contnode
        return None
    from sphinx.util.nodes import make_refnode

    entry = objects[candidates[0]]
    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, candidates[0])


def _data_doc(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """A re-exported constant (``pldp.datasets.DATASET_NAMES``) gets the ``#:`` comment of the module
    that defines it, not the docstring of its type."""
    if what != "data" or not name.startswith("pldp.") or _text_of(lines)[:1] not in ([], _text_of(_type_doc(obj))[:1]):
        return
    from sphinx.pycode import ModuleAnalyzer, PycodeError

    package, _, attr = name.rpartition(".")
    for modname, module in sorted(sys.modules.items()):
        if not (modname == package or modname.startswith(package + ".")) or getattr(module, attr, None) is not obj:
            continue
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except PycodeError:
            continue
        if ("", attr) in docs:
            lines[:] = list(docs[("", attr)])
            return


def _text_of(lines: list[str]) -> list[str]:
    return [line.strip() for line in lines if line.strip()]


def _type_doc(obj: Any) -> list[str]:
    from sphinx.util.docstrings import prepare_docstring

    return prepare_docstring(type(obj).__doc__ or "")


def _builder_inited(app: Any) -> None:
    app.pldp_canonical = canonical()


def _prune_stubs(app: Any) -> None:
    """Delete generated API pages of names no longer public (else they are orphans: a warning)."""
    entries = api_entries()
    names = {*entries, *(n for groups in entries.values() for ns in groups.values() for n in ns)}
    for stub in (Path(app.srcdir) / "api" / "generated").glob("*.rst"):
        if stub.stem not in names:
            stub.unlink()


# --- the HTTP API page ---------------------------------------------------------------------------------

_SCHEMA = """
import json, sys, tempfile, pathlib
from pldp.service.app import create_app
with tempfile.TemporaryDirectory() as tmp:
    app = create_app(pathlib.Path(tmp) / "docs.sqlite3")
    json.dump(app.openapi(), sys.stdout, indent=2, sort_keys=False)
"""


def openapi_schema() -> dict[str, Any]:
    """The collector's OpenAPI schema, from a fresh app on a temporary store (in a subprocess, so
    that the store's writer threads end with it)."""
    import pldp

    env = dict(os.environ)
    src = str(Path(pldp.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
    out = subprocess.run([sys.executable, "-c", _SCHEMA], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def _type(schema: dict[str, Any], components: dict[str, Any]) -> str:
    if not schema:
        return "any"
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f":ref:`{name} <openapi-schema-{name.lower()}>`" if name in components else name
    for combo in ("anyOf", "oneOf", "allOf"):
        if combo in schema:
            return " or ".join(_type(s, components) for s in schema[combo])
    t = schema.get("type", "any")
    if t == "array":
        return f"array of {_type(schema.get('items', {}), components)}"
    if "enum" in schema:
        return f"{t} (one of {', '.join(f'``{v}``' for v in schema['enum'])})"
    if "format" in schema:
        return f"{t} ({schema['format']})"
    return str(t)


def _text(s: str | None) -> list[str]:
    return [] if not s else [*s.strip().splitlines(), ""]


def openapi_rst(schema: dict[str, Any]) -> list[str]:
    """reStructuredText of every operation of ``schema`` and of its component schemas."""
    components = schema.get("components", {}).get("schemas", {})
    lines: list[str] = []
    for path, item in schema.get("paths", {}).items():
        for method, op in item.items():
            if method not in ("get", "put", "post", "delete", "patch", "head", "options"):
                continue
            title = f"{method.upper()} {path}"
            lines += [title, "-" * len(title), ""]
            if op.get("summary"):
                lines += [f"**{op['summary'].strip()}**", ""]
            lines += _text(op.get("description"))
            if op.get("tags"):
                lines += [f"Tags: {', '.join(op['tags'])}", ""]
            params = op.get("parameters", [])
            if params:
                lines += [".. list-table:: Parameters", "   :header-rows: 1", "   :widths: 20 10 25 10 35", ""]
                lines += ["   * - Name", "     - In", "     - Type", "     - Required", "     - Description"]
                for p in params:
                    desc = (p.get("description") or p.get("schema", {}).get("description") or "").replace("\n", " ")
                    lines += [
                        f"   * - ``{p['name']}``",
                        f"     - {p.get('in', '')}",
                        f"     - {_type(p.get('schema', {}), components)}",
                        f"     - {'yes' if p.get('required') else 'no'}",
                        f"     - {desc}",
                    ]
                lines.append("")
            body = op.get("requestBody")
            if body:
                lines += ["Request body" + (" (required)" if body.get("required") else "") + ":", ""]
                lines += [f"   {line}" for line in _text(body.get("description"))]
                for ctype, media in body.get("content", {}).items():
                    lines += [f"* ``{ctype}``: {_type(media.get('schema', {}), components)}"]
                lines.append("")
            responses = op.get("responses", {})
            if responses:
                lines += ["Responses:", ""]
                for code, resp in responses.items():
                    kinds = ", ".join(
                        f"``{c}`` {_type(m.get('schema', {}), components)}" for c, m in resp.get("content", {}).items()
                    )
                    desc = (resp.get("description") or "").replace("\n", " ")
                    lines += [f"* **{code}**: {desc}" + (f" ({kinds})" if kinds else "")]
                lines.append("")
            sec = op.get("security")
            if sec:
                optional = " (optional)" if {} in sec else ""
                lines += ["Security: " + ", ".join(sorted({k for s in sec for k in s})) + optional, ""]
    if components:
        lines += ["Schemas", "=======", ""]
        for name, comp in components.items():
            lines += [f".. _openapi-schema-{name.lower()}:", "", name, "-" * len(name), ""]
            lines += _text(comp.get("description"))
            props = comp.get("properties", {})
            required = set(comp.get("required", []))
            for pname, prop in props.items():
                desc = (prop.get("description") or prop.get("title") or "").replace("\n", " ")
                req = " (required)" if pname in required else ""
                lines += [f"* ``{pname}``{req}: {_type(prop, components)}" + (f". {desc}" if desc else "")]
            if props:
                lines.append("")
            elif any(k in comp for k in ("anyOf", "oneOf")):  # a union (a root model): its members
                lines += [f"One of: {_type(comp, components)}", ""]
    return lines


class OpenAPIDirective(Directive):
    """``.. openapi::``: the collector's HTTP API, from the schema built for this build."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        env = self.state.document.settings.env
        schema = env.app.pldp_openapi
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, StringList(openapi_rst(schema), "openapi.json"), container)
        return container.children


def _write_schema(app: Any) -> None:
    app.pldp_openapi = openapi_schema()
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    (static / "openapi.json").write_text(json.dumps(app.pldp_openapi, indent=2) + "\n", encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("openapi", OpenAPIDirective)
    app.connect("builder-inited", _write_schema)
    app.connect("builder-inited", _builder_inited)
    app.connect("builder-inited", _prune_stubs, priority=400)  # before autosummary writes stubs
    app.connect("missing-reference", _missing_reference)
    app.connect("autodoc-process-docstring", _data_doc)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
