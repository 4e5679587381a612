"""Sphinx configuration of the combex documentation (``make docs``; warnings are errors)."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import combex

project = "combex"
author = "The combex developers"
copyright = "2026, The combex developers"
version = release = combex.__version__

extensions = [
    "myst_nb",  # Markdown pages (it includes myst-parser) and the notebooks, with their committed outputs
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    # MathJax served from the built site (_static/mathjax), not from a CDN: math renders offline
    "sphinx-mathjax-offline",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}  # .rst first: autosummary writes .rst
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# The notebooks live in notebooks/ (the test suite executes them there); the site shows them
# as committed, outputs and figures included, never re-executed at build time.
nb_execution_mode = "off"
nb_merge_streams = True
_NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
_NB_COPY = Path(__file__).resolve().parent / "_notebooks"
_NB_COPY.mkdir(exist_ok=True)
for _nb in sorted(_NOTEBOOKS.glob("*.ipynb")):
    _dst = _NB_COPY / _nb.name
    if not _dst.exists() or not filecmp.cmp(_nb, _dst, shallow=False):
        shutil.copyfile(_nb, _dst)
for _old in _NB_COPY.glob("*.ipynb"):
    if not (_NOTEBOOKS / _old.name).exists():
        _old.unlink()

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
html_theme_options = {"navigation_with_keys": False, "header_links_before_dropdown": 5,
                      "secondary_sidebar_items": ["page-toc"], "show_toc_level": 2}
html_static_path = ["_static"]
html_css_files = ["combex.css"]


def _autosummary_table_visit_html(self, node):
    """Sphinx's visitor keeps a summary table's first column on one line (every space made
    non-breaking); a long signature then widens the column until the table runs off the
    page. Keep the name whole but let a signature wrap after its commas."""
    from docutils import nodes
    from sphinx.ext import autosummary

    autosummary.autosummary_table_visit_html(self, node)
    for par in node.findall(nodes.paragraph):
        for j, sub in enumerate(list(par)):
            if isinstance(sub, nodes.Text) and ",\u00a0" in sub:
                par[j] = nodes.Text(sub.astext().replace(",\u00a0", ", "))


def setup(app):
    from sphinx.ext import autosummary

    app.add_node(autosummary.autosummary_table, override=True,
                 html=(_autosummary_table_visit_html, autosummary.autosummary_noop),
                 latex=(autosummary.autosummary_noop, autosummary.autosummary_noop))
