"""Sphinx configuration of the combex documentation (``make docs``; warnings are errors)."""

from __future__ import annotations

import combex

project = "combex"
author = "The combex developers"
copyright = "2026, The combex developers"
version = release = combex.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]

# API reference generated from the docstrings (numpydoc format), one page per public name.
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

intersphinx_mapping = {}  # no network at build time

html_theme = "pydata_sphinx_theme"
html_title = f"combex {release}"
html_theme_options = {"navigation_with_keys": False}
html_static_path: list[str] = []
