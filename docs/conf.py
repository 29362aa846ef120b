"""Sphinx configuration of the pldp documentation site (``make docs``).

The build is offline: MathJax 3 comes from ``sphinx-mathjax-offline`` (copied into
``_static/mathjax``), the theme loads no remote font or icon, nothing is fetched by intersphinx,
and the HTTP API page is generated from the collector's own OpenAPI schema.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

from pldp_docs import api_entries  # noqa: E402

import pldp  # noqa: E402

project = "pldp"
author = "pldp developers"
copyright = "pldp developers"
release = version = pldp.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinxarg.ext",
    "sphinx_gallery.gen_gallery",
    "sphinx-mathjax-offline",  # MathJax 3 copied into _static/mathjax: no CDN
    "pldp_docs",  # the HTTP API page from the OpenAPI schema; canonical API paths
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**/_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
templates_path = ["_templates"]
default_role = "code"

# --- math: served from the build, never from a CDN ------------------------------------------------
mathjax_path = "mathjax/tex-chtml.js"

# --- API reference ---------------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autosummary_ignore_module_all = False
autosummary_context = {"api": api_entries()}
autodoc_typehints = "none"
autodoc_default_options = {"member-order": "bysource"}
add_module_names = False
# Every Python cross-reference must resolve: to a page of the site, or (docs/_ext/pldp_docs.py) to
# a real private object of pldp, named as plain text. Nothing is fetched, so other projects' names
# are plain text too.
nitpicky = True
nitpick_ignore_regex = [
    ("py:.*", r"(numpy|abc|collections|enum|typing|pathlib|fastapi|starlette|pandas|pyarrow)(\..*)?"),
]
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# --- Markdown pages --------------------------------------------------------------------------------
myst_heading_anchors = 3
# The reproduction pages start at H2 (their titles are the papers, one level below REPRODUCTION.md);
# the wire format's pseudo-JSON (placeholders such as NODE) is highlighted in relaxed mode.
suppress_warnings = ["myst.header", "misc.highlighting_failure"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]

# --- gallery ---------------------------------------------------------------------------------------
# PLDP_DOCS_QUICK=1 (set by .ci/run) is passed on to the example scripts, which then run fewer trials.
QUICK = os.environ.get("PLDP_DOCS_QUICK", "") not in ("", "0")
os.environ["PLDP_DOCS_QUICK"] = "1" if QUICK else "0"
sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "abort_on_example_error": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    # the execution-times page loads DataTables and Bootstrap from CDNs: not written
    "write_computation_times": False,
}

# --- HTML: pydata theme, local assets only -----------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"pldp {release}"
html_static_path: list[str] = []  # MathJax and openapi.json are written into the build's _static
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "icon_links": [],
    "use_edit_page_button": False,
    "show_version_warning_banner": False,
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False
html_copy_source = False
