"""The README's and the user guide's Python examples run as written and print what they show.

A ```python block followed by a ```text block must print that text (doctest's ``...``
stands for a variable part, such as a timing). Paths the README names must exist.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TEXT = README.read_text()


def _examples(text):
    fenced = re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S)
    return [(code, fenced[i + 1][1] if i + 1 < len(fenced) and fenced[i + 1][0] == "text" else None)
            for i, (lang, code) in enumerate(fenced) if lang == "python"]


EXAMPLES = _examples(TEXT)
GUIDE = sorted((ROOT / "docs" / "guide").glob("*.md"))


def test_readme_has_examples_with_output():
    assert len(EXAMPLES) >= 4
    assert sum(out is not None for _, out in EXAMPLES) >= 3


def _check(code, expected, where, namespace=None):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, where, "exec"), {"__name__": "readme"} if namespace is None else namespace)
    if expected is not None:
        got = buf.getvalue()
        ok = doctest.OutputChecker().check_output(expected, got, doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert ok, f"{where} printed:\n{got}\nthe page shows:\n{expected}"


@pytest.mark.parametrize("page", GUIDE, ids=lambda p: p.name)
def test_user_guide_examples_print_what_the_page_shows(page, tmp_path, monkeypatch):
    """The blocks of one page run in order in one namespace, like a doctest."""
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "guide"}
    for i, (code, expected) in enumerate(_examples(page.read_text())):
        _check(code, expected, f"docs/guide/{page.name} block {i}", namespace)


@pytest.mark.parametrize("i", range(len(EXAMPLES)))
def test_readme_example_prints_what_the_readme_shows(i, tmp_path, monkeypatch):
    code, expected = EXAMPLES[i]
    monkeypatch.chdir(tmp_path)
    _check(code, expected, f"README block {i}")


def test_readme_names_only_files_the_repository_has():
    links = re.findall(r"\]\(([^)#:]+)\)", TEXT)
    paths = re.findall(r"`((?:docs|benchmarks|examples|notebooks|combex|tests)/[\w./-]+)`", TEXT)
    paths += re.findall(r"combex sweep (\S+\.toml)", TEXT)
    missing = [p for p in links + paths if not (ROOT / p).exists() and "_build" not in p]
    assert not missing, missing
    assert "DESIGN.md" not in TEXT and "study.toml" not in TEXT
