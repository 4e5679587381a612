"""The README's Python examples run as written and print what the README shows.

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
FENCED = re.findall(r"```(\w*)\n(.*?)```", TEXT, flags=re.S)
EXAMPLES = [(code, FENCED[i + 1][1] if i + 1 < len(FENCED) and FENCED[i + 1][0] == "text" else None)
            for i, (lang, code) in enumerate(FENCED) if lang == "python"]


def test_readme_has_examples_with_output():
    assert len(EXAMPLES) >= 4
    assert sum(out is not None for _, out in EXAMPLES) >= 3


@pytest.mark.parametrize("i", range(len(EXAMPLES)))
def test_readme_example_prints_what_the_readme_shows(i, tmp_path, monkeypatch):
    code, expected = EXAMPLES[i]
    monkeypatch.chdir(tmp_path)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, f"README block {i}", "exec"), {"__name__": "readme"})
    if expected is not None:
        checker = doctest.OutputChecker()
        got = buf.getvalue()
        assert checker.check_output(expected, got, doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE), (
            f"README block {i} printed:\n{got}\nthe README shows:\n{expected}"
        )


def test_readme_names_only_files_the_repository_has():
    links = re.findall(r"\]\(([^)#:]+)\)", TEXT)
    paths = re.findall(r"`((?:docs|benchmarks|examples|notebooks|combex|tests)/[\w./-]+)`", TEXT)
    paths += re.findall(r"combex sweep (\S+\.toml)", TEXT)
    missing = [p for p in links + paths if not (ROOT / p).exists() and "_build" not in p]
    assert not missing, missing
    assert "DESIGN.md" not in TEXT and "study.toml" not in TEXT
