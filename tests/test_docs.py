"""The documentation: every results page opens with figures its own benchmark script draws
(the caption names a command the script takes), installs are described as they work today,
the text speaks of the project and not of its history, and the built site renders its math
offline, shows its figures and notebooks, and fits a 1280 px screen (a real headless
Chromium, as in tests/test_studies_cli.py)."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RESULTS_PAGES = ["full_bandit", "semi_bandit", "linear", "optimal", "optimal_linear", "mips", "performance",
                 "fixed_budget"]
FIGURE = re.compile(r"```\{figure\} (\S+)\n(.*?)```", re.S)
COMMAND = re.compile(r"`(python benchmarks/(\w+)\.py[^`]*)`")


def _figures(page: str) -> list[tuple[str, str]]:
    return FIGURE.findall((DOCS / f"{page}.md").read_text())


@functools.lru_cache(maxsize=None)
def _help(script: str) -> str:
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


# ---------------------------------------------------------------------- figures in the pages
@pytest.mark.parametrize("page", RESULTS_PAGES)
def test_results_page_opens_with_a_figure(page):
    text = (DOCS / f"{page}.md").read_text()
    figs = _figures(page)
    assert figs, f"docs/{page}.md has no figure"
    first_section = text.find("\n## ")
    assert first_section == -1 or text.find("```{figure}") < first_section, \
        f"docs/{page}.md: the first figure comes after the first section"


@pytest.mark.parametrize("page", RESULTS_PAGES)
def test_every_figure_exists_and_its_caption_is_a_command_of_its_script(page):
    for path, caption in _figures(page):
        png = DOCS / path
        assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{page}: {path} is not a PNG file"
        assert 10_000 < png.stat().st_size < 400_000, f"{path}: {png.stat().st_size} bytes"
        cmds = COMMAND.findall(caption)
        assert cmds, f"{page}: the caption of {path} names no `python benchmarks/SCRIPT.py ...` command"
        cmd, script = cmds[0]
        stem = Path(path).stem
        assert stem.startswith(script + "-"), f"{path} is not named after {script}.py"
        assert "--figures docs/figures" in cmd, f"{cmd}: does not write into docs/figures"
        source = (ROOT / "benchmarks" / f"{script}.py").read_text()
        assert f'"{stem[len(script) + 1:]}"' in source, f"benchmarks/{script}.py does not write {stem}.png"
        options = re.findall(r"(?<![\w-])(--[a-z][\w-]*)", cmd)
        usage = _help(script)
        missing = [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", usage)]
        assert not missing, f"{cmd}: benchmarks/{script}.py has no option {missing}"
        assert re.search(r"\b(\d+(\.\d+)?|a|one|two|three|four|five|ten) (s|seconds?|min|minutes?)\b", caption), \
            f"{page}: the caption of {path} does not say how long the command takes"


def test_every_figure_file_is_shown_somewhere():
    shown = {Path(p).name for page in RESULTS_PAGES for p, _ in _figures(page)}
    files = {p.name for p in (DOCS / "figures").glob("*.png")}
    assert files and not files - shown, f"figures no page shows: {sorted(files - shown)}"


def test_figures_are_dots_and_lines_never_bars():
    """Bars from an arbitrary baseline mislead on a log axis: no benchmark figure draws any
    (the notebooks: tests/test_notebooks.py)."""
    for script in sorted((ROOT / "benchmarks").glob("*.py")):
        assert not re.search(r"\.(bar|barh)\(", script.read_text()), script.name


# ---------------------------------------------------------------------- install and extras
def _pyproject():
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_install_instructions_are_the_ones_that_work():
    """combex is installed from a clone or a wheel built from it; `pip install combex` from
    the package index does not work and is not written anywhere."""
    for path in [ROOT / "README.md", DOCS / "index.md", *sorted((DOCS / "guide").glob("*.md"))]:
        text = path.read_text()
        assert not re.search(r"pip install\s+['\"]?combex\b", text), f"{path.name}: pip install combex"
    for path in (ROOT / "README.md", DOCS / "index.md"):
        text = path.read_text()
        assert "pip install ." in text and "pip install '.[studies]'" in text and "python -m build" in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert "-m build" in ci and "venv" in ci and "combex list" in ci and "combex run" in ci


def test_all_extra_has_every_user_facing_extra():
    extras = _pyproject()["project"]["optional-dependencies"]
    (spec,) = extras["all"]
    named = set(re.fullmatch(r"combex\[(.*)\]", spec).group(1).split(","))
    assert named == set(extras) - {"all", "notebooks", "docs", "test"}
    assert "studies" in named


def test_readme_extras_table_lists_what_each_extra_installs():
    extras = _pyproject()["project"]["optional-dependencies"]
    readme = (ROOT / "README.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]*) \|", readme, flags=re.M))
    assert set(extras) - {"notebooks", "docs", "test"} <= set(rows)
    for name, deps in extras.items():
        if name in ("all", "notebooks", "docs", "test"):
            continue
        listed = {w.strip().lower().split(".")[0] for w in rows[name].split(",")}
        wanted = {re.split(r"[\[<>=!;]", d)[0].strip().lower() for d in deps}
        wanted -= {"tomli"}  # only on Python < 3.11
        assert listed == wanted, f"README row of {name!r}: {sorted(listed)}; pyproject: {sorted(wanted)}"


# ---------------------------------------------------------------------- the text
HISTORY = re.compile(
    r"\bissues? ?#?\d+[a-z]?\b|\bissue-\d|\bformer (text|default|claim|code|statement|build|graphs?)\b|\bpreviously\b"
    r"|\bfixed bugs?\b|\bcorrected claim\b|\bsince fixed\b|\bbefore the fix\b|\bprevious version\b"
    r"|\bthe earlier (text|statement|claim|code|rule)\b",
    re.I,
)


def _project_text_files():
    for path in [ROOT / "README.md"]:
        yield path
    for folder, patterns in (("docs", ("*.md", "*.py", "*.css")), ("examples", ("*",)), ("notebooks", ("*.ipynb",)),
                             ("combex", ("*.py", "*.md", "*.toml", "*.html", "*.js")), ("benchmarks", ("*.py", "*.md")),
                             ("tests", ("*.py",))):
        for pattern in patterns:
            for path in sorted((ROOT / folder).rglob(pattern)):
                rel = path.relative_to(ROOT).parts
                if path.is_file() and not any(p.startswith("_build") or p in ("_generated", "_notebooks") for p in rel) \
                        and path != Path(__file__).resolve() and not path.name.endswith(".min.js"):
                    yield path


def test_no_issue_numbers_or_development_history():
    hits = []
    for path in _project_text_files():
        for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = HISTORY.search(line)
            if m:
                hits.append(f"{path.relative_to(ROOT)}:{i}: {m.group(0)!r} in {line.strip()[:90]}")
    assert not hits, "\n".join(hits)


def test_the_history_pattern_finds_history():
    for text in ("Corrected claim (issue 12)", "the former text said", "since issue 15g", "issue-12a fixes",
                 "as previously computed", "a fixed bug"):
        assert HISTORY.search(text), text
    for text in ("a former", "the issue of ties", "Table 2", "previous answer stays a candidate"):
        assert not HISTORY.search(text), text


# ---------------------------------------------------------------------- the built site
@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site `make docs` built (`make test` builds it first); built here when absent."""
    built = DOCS / "_build" / "html"
    if (built / "index.html").exists():
        return built
    out = tmp_path_factory.mktemp("site")
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_nb")
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                          "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
                         cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]
    return out / "html"


def test_site_loads_no_script_or_style_from_the_network(site):
    remote = []
    for page in site.rglob("*.html"):
        for tag in re.findall(r"<(?:script|link)\b[^>]*>", page.read_text()):
            loads = tag.startswith("<script") or "stylesheet" in tag or "preload" in tag
            if loads and re.search(r"""(src|href)=["'](https?:)?//""", tag):
                remote.append(f"{page.relative_to(site)}: {tag[:120]}")
    assert not remote, remote[:5]
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()


def test_results_pages_and_notebooks_are_in_the_site(site):
    for page in RESULTS_PAGES:
        html = (site / f"{page}.html").read_text()
        imgs = re.findall(r"<img [^>]*src=\"(_images/[^\"]+)\"", html)
        assert len(imgs) >= len(_figures(page)) >= 1, page
        assert all((site / src).is_file() for src in imgs), page
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        html = (site / "_notebooks" / f"{nb.stem}.html").read_text()
        assert len(re.findall(r"<img ", html)) >= 1, nb.name


CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                "--window-size=1280,900",
                # no network at all: every name resolves nowhere and every proxy is refused
                "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
                "--proxy-bypass-list=<-loopback>"]


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        msg = "chromium / chromedriver not installed (apt-get install chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(msg + "; CI must run the browser test")
        pytest.skip(msg)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    profile = tempfile.mkdtemp(prefix="combex-docs-chrome-")
    for f in CHROME_FLAGS + [f"--user-data-dir={profile}"]:
        opts.add_argument(f)
    drv = webdriver.Chrome(service=Service(driver), options=opts)
    drv.set_window_size(1280, 900)
    # and the page itself is told it is offline
    drv.execute_cdp_cmd("Network.enable", {})
    drv.execute_cdp_cmd("Network.emulateNetworkConditions",
                        {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
    try:
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _open(browser, path: Path):
    browser.get(path.resolve().as_uri())


def test_math_renders_offline(site, browser):
    from selenium.webdriver.support.ui import WebDriverWait

    page = site / "_generated" / "combex.estimation.html"
    assert r"\(" in page.read_text()  # the page has inline math for MathJax to typeset
    _open(browser, page)
    WebDriverWait(browser, 60).until(
        lambda d: d.execute_script("return document.querySelectorAll('mjx-container').length") > 0)
    left = browser.execute_script(
        "return Array.from(document.querySelectorAll('span.math')).filter(e => !e.querySelector('mjx-container'))"
        ".map(e => e.textContent).slice(0, 3)")
    assert not left, f"math left as TeX source: {left}"
    # the check can fail: a page whose MathJax comes from a CDN shows no typeset math offline,
    # and the page cannot reach one (a request that any network would answer fails here)
    reached = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js', {mode: 'no-cors'})"
        ".then(() => done(true), () => done(false));")
    assert reached is False


def test_figures_load_in_the_browser(site, browser):
    from selenium.webdriver.support.ui import WebDriverWait

    _open(browser, site / "optimal.html")
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(
        "const i = document.querySelectorAll('figure img'); return i.length > 0 && "
        "Array.from(i).every(x => x.complete)"))
    sizes = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure img')).map(i => [i.naturalWidth, "
        "i.getBoundingClientRect().right, document.querySelector('article').getBoundingClientRect().right])")
    assert sizes and all(w > 300 and right <= edge + 1 for w, right, edge in sizes), sizes


def test_api_tables_fit_a_1280px_screen(site, browser):
    _open(browser, site / "_generated" / "combex.solvers.html")
    rows = browser.execute_script(
        "const a = document.querySelector('article').getBoundingClientRect().right;"
        "return Array.from(document.querySelectorAll('table.autosummary')).map(t => "
        "[t.getBoundingClientRect().right - a, t.scrollWidth - t.clientWidth, window.innerWidth])")
    assert rows, "no autosummary table"
    assert all(right <= 1 and hidden <= 1 and width == 1280 for right, hidden, width in rows), rows


def test_guide_tables_fit_a_1280px_screen(site, browser):
    _open(browser, site / "guide" / "choosing.html")
    rows = browser.execute_script(
        "const a = document.querySelector('article').getBoundingClientRect().right;"
        "return Array.from(document.querySelectorAll('article table')).map(t => "
        "[t.getBoundingClientRect().right - a, t.scrollWidth - t.clientWidth])")
    assert rows and all(right <= 1 and hidden <= 1 for right, hidden in rows), rows


def test_guide_pages_have_section_navigation(site, browser):
    from selenium.webdriver.support.ui import WebDriverWait

    _open(browser, site / "guide" / "choosing.html")
    script = ("return Array.from(document.querySelectorAll('.bd-sidebar-primary nav a'))"
              ".map(a => a.textContent.trim())")
    try:  # the page may still be loading when opened: its sidebar comes with it
        WebDriverWait(browser, 30).until(lambda d: d.execute_script(script))
    except Exception:  # noqa: BLE001 - the assertion below says what is missing
        pass
    links = browser.execute_script(script)
    for title in ("Reading a result", "Plug-ins"):
        assert any(link.startswith(title) for link in links), links
