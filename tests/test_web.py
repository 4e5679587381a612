"""The study web app (combex.web, ``combex dashboard``): a real uvicorn server on loopback,
real HTTP requests, and a real headless Chromium for the pages (selenium)."""

from __future__ import annotations

import http.client
import http.cookiejar
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("sqlalchemy")

import combex.studies as cs  # noqa: E402
from combex.environments._instances_full import LAB_QUALITIES, LAB_WORKERS  # noqa: E402
from combex.web import create_app  # noqa: E402
from combex.web._cli import bind_socket  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WORKERS = list(LAB_WORKERS)  # the lab case: 12 workers, the best team of 4 scores 74, the second 72
OWNER = "owner-token-for-the-tests-0123456789"


# ============================================================================ helpers
@contextmanager
def served(storage, **kwargs):
    """The app of ``storage`` served by uvicorn on a free loopback port (in a thread)."""
    import uvicorn

    kwargs.setdefault("owner_token", OWNER)
    kwargs.setdefault("interval", 0.5)
    app = create_app(storage, **kwargs)
    sock = bind_socket(kwargs.get("host", "127.0.0.1"), 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    th = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    th.start()
    t0 = time.time()
    while not server.started:
        assert time.time() - t0 < 30, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        th.join(timeout=30)
        sock.close()


class Client:
    """A cookie-keeping HTTP client (urllib) that does not follow redirects."""

    def __init__(self, base):
        self.base = base
        self.jar = http.cookiejar.CookieJar()

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *a, **k):
                return None

        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect)

    def request(self, path, data=None, headers=None):
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        req = urllib.request.Request(self.base + path, data=body, headers=headers or {})
        try:
            with self.opener.open(req, timeout=60) as r:
                return r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode()

    def get(self, path, **kw):
        return self.request(path, **kw)

    def post(self, path, data, **kw):
        return self.request(path, data=data, **kw)

    def csrf(self, path="/"):
        status, _, text = self.get(path)
        assert status == 200, text
        m = re.search(r'name="csrf" value="([^"]+)"', text)
        assert m, text[:500]
        return m.group(1)


def raw_request(base, method, path, headers, body=b""):
    """One request with exactly these headers (http.client; Host included)."""
    u = urllib.parse.urlparse(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for k, v in headers.items():
        conn.putheader(k, v)
    conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    r = conn.getresponse()
    out = r.status, r.read().decode()
    conn.close()
    return out


def lab_study(storage, name="lab", *, seed=0, told=0, rng=0, solver="top-two"):
    """The lab case: 12 workers, teams of 4, a session's score in [0, 100], the noise level
    unknown to the study; ``told`` sessions told by the owner (scores: member qualities +
    N(0, 10^2), rounded, clipped)."""
    problem = cs.problem_spec(workers=WORKERS, team_size=4, score_range=(0, 100))  # noise level unknown
    study = cs.create_study(storage=storage, name=name, problem=problem,
                            solver=solver, solver_params={"delta": 0.05}, seed=seed)
    gen = np.random.default_rng(rng)
    for _ in range(told):
        t = study.ask()
        study.tell(t.id, session_score(t, gen))
    return study


def session_score(ticket, gen):
    return float(np.clip(round(sum(LAB_QUALITIES[i] for i in ticket.arm) + gen.normal(0, 10), 1), 0, 100))


# ============================================================================ bind, port, host
def _dashboard(*argv, timeout=60):
    return subprocess.run([sys.executable, "-m", "combex", "dashboard", *argv], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


@pytest.mark.parametrize("port", ["99999", "-1", "http", "80.5"])
def test_a_bad_port_is_a_clear_error(tmp_path, port):
    out = _dashboard(str(tmp_path / "lab.db"), "--port", port)
    assert out.returncode == 2
    assert f"The 'port' parameter of combex dashboard must be an int in the range [0, 65535]. Got " in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "lab-pc.example.org"])
def test_a_non_local_bind_is_refused_without_allow_remote(tmp_path, host):
    out = _dashboard(str(tmp_path / "lab.db"), "--host", host, "--port", "0")
    assert out.returncode == 2, out.stdout
    assert f"The 'host' parameter of combex dashboard must be a loopback address" in out.stderr
    assert "--allow-remote" in out.stderr and "Traceback" not in out.stderr


def test_a_wildcard_bind_needs_the_names_browsers_use(tmp_path):
    out = _dashboard(str(tmp_path / "lab.db"), "--host", "0.0.0.0", "--port", "0", "--allow-remote")
    assert out.returncode == 2
    assert "The 'allowed_host' parameter of combex dashboard must be given when every interface is bound" in out.stderr


def test_a_remote_bind_warns_that_traffic_is_unencrypted(tmp_path):
    """--allow-remote on every interface: it serves, and says loudly that nothing is encrypted.
    (The test talks to it on loopback only.)"""
    db = str(tmp_path / "lab.db")
    lab_study(db)
    p = subprocess.Popen([sys.executable, "-m", "combex", "dashboard", db, "--host", "0.0.0.0", "--port", "0",
                          "--allow-remote", "--allowed-host", "lab-pc.example.org"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        first = p.stdout.readline()
        port = int(re.search(r":(\d+)/", first).group(1))
        token_line = p.stdout.readline()
        assert token_line.startswith("owner token")
        warn = "".join(p.stderr.readline() for _ in range(3))
        assert "WARNING" in warn and "NOT encrypted" in warn and "TLS" in warn
        base = f"http://127.0.0.1:{port}"
        status, text = raw_request(base, "GET", "/api/study/lab", {"Host": f"lab-pc.example.org:{port}"})
        assert status == 403 and "Sign in" in text  # remote: reads need a sign-in
        status, text = raw_request(base, "GET", "/api/studies", {"Host": f"lab-pc.example.org:{port}"})
        assert status == 200 and json.loads(text) == {"studies": [{"name": "lab"}]}
        status, _ = raw_request(base, "GET", "/api/studies", {"Host": f"evil.example:{port}"})
        assert status == 400
    finally:
        p.terminate()
        p.wait(timeout=30)


def test_the_command_serves_and_prints_the_owner_token(tmp_path):
    db = str(tmp_path / "lab.db")
    lab_study(db, told=3)
    p = subprocess.Popen([sys.executable, "-m", "combex", "dashboard", db, "--port", "0"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        first = p.stdout.readline()
        assert first.startswith("combex dashboard on http://127.0.0.1:")
        line = p.stdout.readline()  # the two lines docs/guide/studies.md shows
        assert line.startswith("owner token (sign in as the owner; a new one at every start): ")
        token = line.rsplit(" ", 1)[1].strip()
        assert len(token) >= 30
        base = first.split(" on ")[1].split()[0].rstrip("/")
        doc = json.loads(urllib.request.urlopen(base + "/api/studies", timeout=30).read())
        assert [s["name"] for s in doc["studies"]] == ["lab"] and doc["studies"][0]["evaluations"] == 3
        c = Client(base)
        csrf = c.csrf("/study/lab/assistant")
        status, headers, _ = c.post("/study/lab/signin", {"csrf": csrf, "token": token})
        assert status == 303
        assert "Signed in as the owner" in c.get("/study/lab/assistant")[2]
    finally:
        p.terminate()
        p.wait(timeout=30)
    assert token not in p.stderr.read()


def test_a_foreign_host_header_is_refused(tmp_path):
    db = str(tmp_path / "lab.db")
    lab_study(db)
    with served(db) as base:
        port = base.rsplit(":", 1)[1]
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", ""):
            for path in ("/", "/api/studies", "/api/study/lab", "/study/lab"):
                status, text = raw_request(base, "GET", path, {"Host": host})
                assert status == 400, (host, path, status)
                assert "lab" not in text
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost"):
            assert raw_request(base, "GET", "/api/studies", {"Host": host})[0] == 200
        # a name added with --allowed-host
    with served(db, allowed_host=["lab-pc.example.org"]) as base:
        assert raw_request(base, "GET", "/api/studies", {"Host": "lab-pc.example.org"})[0] == 200
        assert raw_request(base, "GET", "/api/studies", {"Host": "other.example.org"})[0] == 400


# ============================================================================ writes: sign-in, CSRF, origin
def _tickets(db, name="lab"):
    return cs.load_study(storage=db, name=name).summary()["tickets"]


def test_writes_need_a_sign_in_a_csrf_token_and_the_same_origin(tmp_path):
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=2)
    token = study.add_assistant("Ravi")
    before = _tickets(db)
    with served(db) as base:
        anon = Client(base)
        csrf = anon.csrf("/study/lab/assistant")
        # no sign-in
        status, _, text = anon.post("/study/lab/ask", {"csrf": csrf})
        assert status == 403 and "sign in to this study first" in text
        # a wrong token, an empty token, another study's token
        for bad in ("not-a-token", "", token[:-1], OWNER[:-1]):
            status, _, text = anon.post("/study/lab/signin", {"csrf": csrf, "token": bad})
            assert status == 403 and "not an assistant token of this study" in text
            assert 'href="/study/lab/assistant" id="back-to-entry"' in text  # a way back to the sign-in form
        status, _, _ = anon.post("/study/lab/ask", {"csrf": csrf})
        assert status == 403
        # signed in, but the CSRF token is missing, wrong, or another session's
        c = Client(base)
        csrf = c.csrf("/study/lab/assistant")
        status, headers, _ = c.post("/study/lab/signin", {"csrf": csrf, "token": token})
        assert status == 303 and headers["location"].endswith("/study/lab/assistant")
        csrf = c.csrf("/study/lab/assistant")  # a new one after sign-in
        other = Client(base).csrf("/study/lab/assistant")
        for form in ({}, {"csrf": ""}, {"csrf": "x" * 32}, {"csrf": other}):
            status, _, text = c.post("/study/lab/ask", form)
            assert status == 403 and "security token" in text, form
        # a form of a session the server does not know (it was restarted): sign in again
        status, _, text = Client(base).post("/study/lab/ask", {"csrf": csrf})
        assert status == 403 and "this browser&#39;s sign-in has ended (the server was restarted" in text
        assert "sign in again with your token (the tickets you hold are still yours)" in text
        # the right token, from a page of another site
        for headers in ({"Origin": "http://evil.example"}, {"Origin": f"http://localhost:{base.rsplit(':', 1)[1]}"},
                        {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}):
            status, _, text = c.post("/study/lab/ask", {"csrf": csrf}, headers=headers)
            assert status == 403 and "another site" in text, headers
        # the sign-in form too is refused from another site
        status, _, _ = anon.post("/study/lab/signin", {"csrf": anon.csrf("/study/lab/assistant"), "token": token},
                                 headers={"Origin": "http://evil.example"})
        assert status == 403
        assert _tickets(db) == before  # nothing was written
        # the same form from this server's page goes through
        status, _, _ = c.post("/study/lab/ask", {"csrf": csrf},
                              headers={"Origin": base, "Sec-Fetch-Site": "same-origin"})
        assert status == 303
        assert _tickets(db)["pending"] == before["pending"] + 1


def test_a_removed_assistant_can_no_longer_write(tmp_path):
    db = str(tmp_path / "lab.db")
    study = lab_study(db)
    token = study.add_assistant("Zoe")
    with served(db) as base:
        c = Client(base)
        c.post("/study/lab/signin", {"csrf": c.csrf("/study/lab/assistant"), "token": token})
        csrf = c.csrf("/study/lab/assistant")
        study.remove_assistant("Zoe")
        status, _, text = c.post("/study/lab/ask", {"csrf": csrf})
        assert status == 403 and "no longer valid" in text
    assert _tickets(db)["pending"] == 0


def test_no_page_or_json_names_the_storage_or_a_secret(tmp_path):
    db = str(tmp_path / "secret-place" / "lab.db")
    os.makedirs(os.path.dirname(db))
    study = lab_study(db, told=3)
    token = study.add_assistant("Ana")
    with served(db) as base:
        c = Client(base)
        c.post("/study/lab/signin", {"csrf": c.csrf("/study/lab/assistant"), "token": token})
        csrf = c.csrf("/study/lab/assistant")
        c.post("/study/lab/ask", {"csrf": csrf})
        pages = ["/", "/api/studies", "/study/lab", "/api/study/lab", "/study/lab/assistant", "/study/nope",
                 "/api/study/nope"]
        texts = [c.get(p)[2] for p in pages] + [Client(base).get(p)[2] for p in pages]
        status, _, text = c.post("/study/lab/enter", {"csrf": csrf, "ticket": "999", "score": "50"})
        texts.append(text)
    for text in texts:
        assert "secret-place" not in text and str(tmp_path) not in text
        assert token not in text and OWNER not in text


# ============================================================================ in a real browser
CHROME_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                "--window-size=1200,1000"]


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        msg = "chromium / chromedriver not installed (apt-get install chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(msg + "; CI must run the browser tests")
        pytest.skip(msg)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    profile = tempfile.mkdtemp(prefix="combex-chrome-")
    for f in CHROME_FLAGS + [f"--user-data-dir={profile}"]:
        opts.add_argument(f)
    d = webdriver.Chrome(service=Service(driver), options=opts)
    try:
        yield d
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _by():
    from selenium.webdriver.common.by import By

    return By


def _wait(d, cond, timeout=30):
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    from selenium.common.exceptions import WebDriverException

    def read(drv):
        try:
            return cond(drv)
        except WebDriverException as exc:  # Chromium's form of a stale element during a navigation
            if "does not belong to the document" in str(exc):
                return False
            raise

    # the study page re-draws its sections at every poll: reads retry on a stale element
    return WebDriverWait(d, timeout, ignored_exceptions=[StaleElementReferenceException,
                                                         NoSuchElementException]).until(read)


def _text(d, css):
    return d.find_element(_by().CSS_SELECTOR, css).text


def _sign_in(d, base, token, study="lab"):
    By = _by()
    d.delete_all_cookies()
    d.get(f"{base}/study/{study}/assistant")
    d.find_element(By.ID, "token").send_keys(token)
    d.find_element(By.ID, "signin").click()
    _wait(d, lambda d: d.find_elements(By.ID, "assistant-name"))


def _ask(d):
    By = _by()
    from selenium.webdriver.support.expected_conditions import staleness_of

    button = d.find_element(By.ID, "ask")
    button.click()
    _wait(d, staleness_of(button))  # the new page: the old one may list a handed-back ticket
    el = _wait(d, lambda d: d.find_element(By.CSS_SELECTOR, ".ticket"))
    tid = int(el.get_attribute("data-ticket"))
    team = [m.text for m in el.find_elements(By.CSS_SELECTOR, ".member")]
    return tid, team


def _post_from_page(d, path, **fields):
    """A form post from the signed-in page (its CSRF token, same origin), as a page's script
    could send it: (status, body)."""
    csrf = d.find_element(_by().NAME, "csrf").get_attribute("value")
    return d.execute_script("""
        const f = new FormData(); f.append('csrf', arguments[0]);
        for (const [k, v] of Object.entries(arguments[2])) f.append(k, v);
        const r = new XMLHttpRequest(); r.open('POST', arguments[1], false); r.send(f);
        return [r.status, r.responseText];""", csrf, path, fields)


def _enter(d, tid, text):
    By = _by()
    box = d.find_element(By.ID, f"score-{tid}")
    box.clear()
    box.send_keys(text)
    d.find_element(By.CSS_SELECTOR, f"#ticket-{tid} form.enter button").click()


@contextmanager
def _signed_in(tmp_path, browser, told=4, assistant="Ravi"):
    """The lab study with ``told`` sessions told, served, ``assistant`` signed in:
    ``(study, base, token)``."""
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=told)
    token = study.add_assistant(assistant)
    with served(db) as base:
        _sign_in(browser, base, token)
        yield study, base, token


@contextmanager
def _holding_a_ticket(tmp_path, browser, told=4, assistant="Ravi"):
    """The lab study with ``told`` sessions told, ``assistant`` signed in and holding a
    ticket: ``(study, base, ticket, team)``."""
    with _signed_in(tmp_path, browser, told, assistant) as (study, base, _):
        tid, team = _ask(browser)
        yield study, base, tid, team


@contextmanager
def _mias_ticket_seen_by_ravi(tmp_path, browser):
    """The lab study with four sessions told, Mia holding a ticket and Ravi signed in:
    ``(study, base, ticket, team, mia_token, ravi_token)``."""
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=4)
    mia, ravi = study.add_assistant("Mia"), study.add_assistant("Ravi")
    with served(db) as base:
        _sign_in(browser, base, mia)
        tid, team = _ask(browser)
        _sign_in(browser, base, ravi)
        yield study, base, tid, team, mia, ravi


def _correct(d, box, score, reason, by="Ravi"):
    """Fill a correction form inside ``box`` (its details opened by the caller), review it
    and record it: the flash of the correction."""
    By = _by()
    box.find_element(By.NAME, "score").send_keys(score)
    box.find_element(By.NAME, "reason").send_keys(reason)
    box.find_element(By.CSS_SELECTOR, "form.correct button").click()
    _wait(d, lambda d: _text(d, "#confirm-score") == score)
    d.find_element(By.ID, "confirm").click()
    _wait(d, lambda d: f"corrected to {score} by {by}" in _text(d, ".flash"))


def _review(d, tid, text):
    """Type a ticket's score and press *Review*: the confirmation page."""
    _enter(d, tid, text)
    _wait(d, lambda d: d.find_elements(_by().ID, "confirm"))


def _record(d, tid, text):
    """*Record* on the confirmation page of ``text`` for ticket ``tid``, and its flash."""
    d.find_element(_by().ID, "confirm").click()
    _wait(d, lambda d: f"Recorded {text} for ticket #{tid}" in _text(d, ".flash"))


def test_a_slipped_decimal_point_is_warned_from_the_first_told_score(tmp_path, browser):
    """7.0 typed for 70 on the third session: two told scores (about 60) are enough to warn
    (a sixth of their median); before any score nothing is known to compare with."""
    By = _by()
    for told, warned in ((0, False), (2, True)):
        db = str(tmp_path / f"lab{told}.db")
        study = lab_study(db, told=told)
        with served(db) as base:
            _sign_in(browser, base, study.add_assistant("Ravi"))
            tid, _ = _ask(browser)
            _enter(browser, tid, "7.0")
            _wait(browser, lambda d: d.find_elements(By.ID, "confirm-score"))
            found = browser.find_elements(By.ID, "confirm-warning")
            assert bool(found) == warned and (not found or "Check it (a slipped decimal point, a digit dropped or added)" in found[0].text)


def test_an_assistant_signs_in_asks_enters_confirms_and_sees_the_score(tmp_path, browser):
    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=8)
    token = study.add_assistant("Ravi")
    with served(db) as base:
        _sign_in(browser, base, token)
        assert _text(browser, "#assistant-name") == "Ravi"
        tid, team = _ask(browser)
        (ticket,) = study.pending()
        assert ticket.id == tid and ticket.assistant == "Ravi"
        assert team == list(ticket.names) and len(team) == 4 and set(team) <= set(WORKERS)
        assert "from 0 to 100" in _text(browser, f"#ticket-{tid} form.enter label")
        # 7.5 typed for 75: the confirmation shows it and warns; back, fix, confirm
        _enter(browser, tid, "7.5")
        _wait(browser, lambda d: d.find_elements(By.ID, "confirm-score"))
        assert _text(browser, "#confirm-score") == "7.5"
        assert "decimal point" in _text(browser, "#confirm-warning")
        browser.find_element(By.ID, "change").click()
        assert study.summary()["evaluations"] == 8  # nothing recorded yet
        _wait(browser, lambda d: d.find_elements(By.ID, f"score-{tid}"))
        assert browser.find_element(By.ID, f"score-{tid}").get_attribute("value") == "7.5"  # what was typed, to fix
        _enter(browser, tid, "75")
        _wait(browser, lambda d: _text(d, "#confirm-score") == "75")
        assert not browser.find_elements(By.ID, "confirm-warning")
        browser.find_element(By.ID, "confirm").click()
        _wait(browser, lambda d: "Recorded 75 for ticket" in _text(d, ".flash"))
        row = browser.find_element(By.CSS_SELECTOR, f"tr.told-row[data-ticket='{tid}']")
        assert "75" in row.text and "Ravi" in row.text
        assert row.text.startswith(f"9 #{tid} ")  # the session's number in told order, then its ticket
        assert study.summary()["evaluations"] == 9 and study.pending() == []
        told = study.trials_dataframe().set_index("id").loc[tid]
        assert (told["asked_by"], told["told_by"], told["reward_sum"]) == ("Ravi", "Ravi", 75.0)  # who wrote
        # the study page shows it (and updates by itself when another assistant tells)
        browser.get(f"{base}/study/lab")
        _wait(browser, lambda d: "Ravi" in _text(d, f"#log tr.log-row[data-ticket='{tid}']"))
        _wait(browser, lambda d: "75" in _text(d, f"#log tr.log-row[data-ticket='{tid}'] .score"))
        t = study.ask()
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"#pending tr[data-ticket='{t.id}']"))
        study.tell(t.id, 60.0)
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"#log tr.log-row[data-ticket='{t.id}']"))
        # a bad score is refused on the form, nothing recorded
        browser.get(f"{base}/study/lab/assistant")
        tid, _ = _ask(browser)
        for bad, msg in (("7,5", "decimal point, not a comma"), ("abc", "must be a number"),
                         ("101", "must lie in [0, 100]"), ("-1", "must lie in [0, 100]"), ("nan", "finite")):
            _enter(browser, tid, bad)
            _wait(browser, lambda d: msg in _text(d, f"#ticket-{tid} .field-error"))
        assert study.summary()["evaluations"] == 10


class _EvilSite:
    """Another site (another origin) serving one page whose script posts a form to the app."""

    def __init__(self, html):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        body = html.encode()

        class H(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = f"http://localhost:{self.srv.server_address[1]}/"

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def test_a_form_posted_from_a_page_of_another_site_is_refused(tmp_path, browser):
    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=2)
    token = study.add_assistant("Ravi")
    with served(db) as base:
        _sign_in(browser, base, token)
        csrf = browser.find_element(By.CSS_SELECTOR, "input[name=csrf]").get_attribute("value")
        # even with the session's CSRF token (say it leaked), the other site's post is refused
        evil = _EvilSite(f"""<html><body><form id="f" method="post" action="{base}/study/lab/ask">
            <input type="hidden" name="csrf" value="{csrf}"></form>
            <script>document.getElementById('f').submit();</script></body></html>""")
        try:
            browser.get(evil.url)
            _wait(browser, lambda d: d.current_url.startswith(base))
            assert "another site" in _text(browser, "#refused")
        finally:
            evil.close()
        assert study.pending() == []
        # a script of the other site cannot read the studies either (no CORS header)
        evil = _EvilSite(f"""<html><body><p id="out">waiting</p><script>
            fetch("{base}/api/study/lab").then(r => r.text()).then(t => {{document.getElementById('out').textContent =
            'read ' + t.length}}).catch(e => {{document.getElementById('out').textContent = 'blocked'}});
            </script></body></html>""")
        try:
            browser.get(evil.url)
            _wait(browser, lambda d: _text(d, "#out") != "waiting")
            assert _text(browser, "#out") == "blocked"
        finally:
            evil.close()


def test_a_correction_shows_in_the_log_and_the_estimates(tmp_path, browser):
    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=24)
    token = study.add_assistant("Ravi")
    t = study.ask(assistant="Ravi")
    study.tell(t.id, 95.0, assistant="Ravi")
    other = study.ask()
    study.tell(other.id, 50.0)  # told by the owner at a terminal
    est_before = {r["name"]: r["estimate"] for r in _rows(study.member_estimates())}
    with served(db) as base:
        _sign_in(browser, base, token)
        assert not browser.find_elements(By.CSS_SELECTOR, f"tr.told-row[data-ticket='{other.id}']")  # not Ravi's
        row = browser.find_element(By.CSS_SELECTOR, f"tr.told-row[data-ticket='{t.id}']")
        row.find_element(By.TAG_NAME, "summary").click()
        _correct(browser, row, "5", "typed 95 for 5")
        est_after = {r["name"]: r["estimate"] for r in _rows(study.member_estimates())}
        for name in t.names:
            assert est_after[name] < est_before[name]
        browser.get(f"{base}/study/lab")
        _wait(browser, lambda d: "corrected to 5 by Ravi" in _text(d, f"#log tr.log-row[data-ticket='{t.id}']"))
        _wait(browser, lambda d: "typed 95 for 5" in _text(d, f"#log tr.log-row[data-ticket='{t.id}'] .corrections"))
        page = {k: float(v) for k, v in _wait(browser, lambda d: _estimates(d)).items()}
        for name in t.names:
            assert page[name] == pytest.approx(est_after[name], abs=0.01)
        # Ravi cannot correct the owner's tell
        c = Client(base)
        c.post("/study/lab/signin", {"csrf": c.csrf("/study/lab/assistant"), "token": token})
        status, _, text = c.post("/study/lab/correct", {"csrf": c.csrf("/study/lab/assistant"), "ticket": other.id,
                                                        "score": "1", "reason": "no"})
        assert status == 403 and "corrects their own scores" in text
        # the owner corrects anyone's: voided here, recorded as the owner's correction
        o = Client(base)
        o.post("/study/lab/signin", {"csrf": o.csrf("/study/lab/assistant"), "token": OWNER})
        csrf = o.csrf("/study/lab/assistant")
        status, _, text = o.post("/study/lab/correct", {"csrf": csrf, "ticket": t.id, "void": "1",
                                                        "reason": "session not held"})
        assert status == 200 and "void" in text  # the confirmation page
        status, _, _ = o.post("/study/lab/correct/confirm", {"csrf": csrf, "ticket": t.id, "void": "1",
                                                             "reason": "session not held"})
        assert status == 303
        row = [r for r in json.loads(o.get("/api/study/lab")[2])["log"]["rows"] if r["id"] == t.id][0]
        assert row["voided"] and [(c["assistant"], c["voided"]) for c in row["corrections"]] == [
            ("Ravi", False), (None, True)]


def test_an_assistant_corrects_a_score_older_than_the_rows_listed(tmp_path, browser):
    """Past the newest rows the page lists, an assistant's own older score is corrected by its
    ticket number (and a row pushed out of the list by others' tells meanwhile, too); a
    wrong number is said beside the form, with what was typed kept."""
    from combex.web._data import LOG_ROWS

    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db)
    token = study.add_assistant("Ravi")
    first = study.ask(assistant="Ravi")
    study.tell(first.id, 80.0, assistant="Ravi")
    gen = np.random.default_rng(1)
    for _ in range(LOG_ROWS + 5):
        t = study.ask()
        study.tell(t.id, session_score(t, gen))
    with served(db) as base:
        _sign_in(browser, base, token)
        assert not browser.find_elements(By.CSS_SELECTOR, f"tr.told-row[data-ticket='{first.id}']")
        assert f"newest {LOG_ROWS} told evaluations" in _text(browser, "body")
        box = browser.find_element(By.CSS_SELECTOR, "details.correct-older")
        box.find_element(By.TAG_NAME, "summary").click()
        box.find_element(By.NAME, "ticket").send_keys("9999")  # a wrong number first: said beside the form
        box.find_element(By.NAME, "score").send_keys("70")
        box.find_element(By.NAME, "reason").send_keys("typed 80 for 70")
        box.find_element(By.CSS_SELECTOR, "button").click()
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "details.correct-older[open] .correction-error"))
        box = browser.find_element(By.CSS_SELECTOR, "details.correct-older")
        assert _text(browser, "details.correct-older .correction-error") == (
            "ticket #9999 has no told score in this study.")
        assert [box.find_element(By.NAME, k).get_attribute("value") for k in ("ticket", "score", "reason")] == [
            "9999", "70", "typed 80 for 70"]  # what was typed is kept, to mend
        focus = browser.switch_to.active_element  # and the page opens at the form (its score focused)
        assert focus.get_attribute("name") == "score" and focus.get_attribute("value") == "70"
        ticket = box.find_element(By.NAME, "ticket")
        ticket.clear()
        ticket.send_keys(str(first.id))
        box.find_element(By.CSS_SELECTOR, "button").click()
        _wait(browser, lambda d: _text(d, "#confirm-score") == "70")
        browser.find_element(By.ID, "confirm").click()
        _wait(browser, lambda d: "corrected to 70 by Ravi" in _text(d, ".flash"))
        browser.get(f"{base}/study/lab")  # the study page lists the corrected older row after the newest ones
        _wait(browser, lambda d: "typed 80 for 70" in _text(d, f"#log tr.log-row[data-ticket='{first.id}']"))
        assert "Older evaluations that were corrected" in _text(browser, "#log")
    df = study.trials_dataframe().set_index("id")
    assert df.loc[first.id, "told_seq"] == 1 and df.loc[first.id, "reward_sum_corrected"] == 70.0
    assert int(df["corrected"].sum()) == 1


def test_an_assistant_finds_an_older_scores_ticket_on_the_list_of_all_told_scores(tmp_path, browser):
    """The ticket number of a score older than the rows listed is on the list of all the
    assistant's told scores (a link beside the older-score form); following it opens that
    form with the number filled in, and the correction goes through."""
    from combex.web._data import LOG_ROWS

    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db)
    token = study.add_assistant("Ravi")
    first = study.ask(assistant="Ravi")
    study.tell(first.id, 4.5, assistant="Ravi")  # a slip: 45.5 was meant
    gen = np.random.default_rng(2)
    for k in range(LOG_ROWS + 5):
        t = study.ask(assistant="Ravi" if k % 10 == 0 else None)
        study.tell(t.id, session_score(t, gen), assistant="Ravi" if k % 10 == 0 else None)
    with served(db) as base:
        _sign_in(browser, base, token)
        assert not browser.find_elements(By.CSS_SELECTOR, f"tr.told-row[data-ticket='{first.id}']")
        browser.find_element(By.ID, "told-all-link").click()
        _wait(browser, lambda d: d.find_elements(By.ID, "told-all"))
        rows = browser.find_elements(By.CSS_SELECTOR, "#told-all tr.told-row")
        assert len(rows) == 1 + len(range(0, LOG_ROWS + 5, 10))  # Ravi's only, every one of them
        assert "All 7 of your told scores" in _text(browser, "#told")
        row = browser.find_element(By.CSS_SELECTOR, f"#told-all tr.told-row[data-ticket='{first.id}']")
        assert "4.5" in row.text and "Ravi" in row.text
        row.find_element(By.TAG_NAME, "a").click()
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "details.correct-older[open]"))
        box = browser.find_element(By.CSS_SELECTOR, "details.correct-older")
        assert box.find_element(By.NAME, "ticket").get_attribute("value") == str(first.id)
        _correct(browser, box, "45.5", "decimal point slipped")
    assert study.trials_dataframe().set_index("id").loc[first.id, "reward_sum_corrected"] == 45.5


def _rows(est):
    return est["rows"] if isinstance(est, dict) else est


def test_a_release_puts_the_ticket_back(tmp_path, browser):
    By = _by()
    with _holding_a_ticket(tmp_path, browser) as (study, base, tid, team):
        browser.find_element(By.CSS_SELECTOR, f"#ticket-{tid} form.release button").click()
        _wait(browser, lambda d: f"Released ticket #{tid}" in _text(d, ".flash"))
        assert browser.find_elements(By.ID, "no-tickets") and study.pending() == []
        tid2, team2 = _ask(browser)
        assert tid2 != tid and team2 == team  # handed out again
        assert study.summary()["evaluations"] == 4


def test_a_score_for_a_ticket_released_meanwhile_is_recorded_for_the_assistant_who_asked(tmp_path, browser):
    """The owner releases a ticket while its assistant is on the confirmation page: the
    session was run, so *Record* records its score (as ``Study.tell`` accepts it) and says
    the ticket had been released; *Record* sent again (a double click, a reload) records
    nothing more and says the ticket is recorded, with its score and by whom; another
    assistant cannot record it."""
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=4)
    token = study.add_assistant("Ravi")
    other = study.add_assistant("Mia")
    with served(db) as base:
        _sign_in(browser, base, token)
        tid, team = _ask(browser)
        _review(browser, tid, "55")
        study.release(tid)
        _record(browser, tid, "55")
        assert "The ticket had been released; the session was run, so its score counts all the same." in _text(
            browser, ".flash")
        rows = {r["id"]: r for r in study.trials_dataframe().to_dict("records")}
        assert rows[tid]["state"] == "told" and rows[tid]["reward_sum"] == 55 and rows[tid]["told_by"] == "Ravi"
        status = _post_from_page(browser, "/study/lab/tell", ticket=str(tid), score="55")
        assert f"Ticket #{tid} is recorded: 55 by Ravi. Nothing more was recorded." in status[1]
        assert study.summary()["evaluations"] == 5
        tid2, _ = _ask(browser)
        study.release(tid2)
        _sign_in(browser, base, other)
        status = _post_from_page(browser, "/study/lab/tell", ticket=str(tid2), score="50")
        assert f"Ticket #{tid2} is not one of your pending tickets" in status[1]
        assert study.summary()["evaluations"] == 5


def test_an_assistant_enters_the_score_of_a_session_run_in_anothers_place(tmp_path, browser):
    """Mia asked for a team and went home; Ravi ran the session: he finds her ticket under
    *Tickets out with other assistants*, is told whose it is before recording, and the
    score counts as told by him (asked by Mia). He cannot release her ticket; Mia's late
    entry is told who recorded it."""
    By = _by()
    with _mias_ticket_seen_by_ravi(tmp_path, browser) as (study, base, tid, team, mia, ravi):
        assert not browser.find_elements(By.CSS_SELECTOR, "#others-tickets[open]")
        assert _text(browser, "#others-tickets summary") == "Tickets out with other assistants (1)"
        browser.find_element(By.CSS_SELECTOR, "#others-tickets summary").click()
        card = browser.find_element(By.ID, f"ticket-{tid}")
        assert "(asked by Mia)" in card.text and [m.text for m in card.find_elements(By.CSS_SELECTOR, ".member")] == team
        assert not card.find_elements(By.CSS_SELECTOR, "form.release")
        _enter(browser, tid, "abc")  # a slip in another's ticket: said beside it, its box open
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#others-tickets[open] .field-error"))
        _review(browser, tid, "63")
        assert _text(browser, "#confirm-others").startswith(
            "This ticket is Mia's: record its score here only if the session was run (by you, in Mia's place) and "
            "Mia will not enter it")
        _record(browser, tid, "63")
        rows = {r["id"]: r for r in study.trials_dataframe().to_dict("records")}
        assert (rows[tid]["state"], rows[tid]["reward_sum"], rows[tid]["asked_by"], rows[tid]["told_by"]) == (
            "told", 63, "Mia", "Ravi")
        assert not browser.find_elements(By.ID, "others-tickets")
        _sign_in(browser, base, mia)
        assert browser.find_elements(By.ID, "no-tickets")
        row = browser.find_element(By.CSS_SELECTOR, f"#told tr.told-row[data-ticket='{tid}']")
        assert "Ravi (in your place)" in row.text and not row.find_elements(By.CSS_SELECTOR, "form.correct")
        status = _post_from_page(browser, "/study/lab/tell", ticket=str(tid), score="64")
        assert f"Ticket #{tid} is recorded: 63 by Ravi. Nothing more was recorded." in status[1]
        tid2, _ = _ask(browser)
        _sign_in(browser, base, ravi)
        status = _post_from_page(browser, "/study/lab/release", ticket=str(tid2))
        assert f"Ticket #{tid2} is not one of your pending tickets" in status[1]
        assert study.pending()[0].id == tid2 and study.summary()["evaluations"] == 5


def test_after_a_restart_the_sign_in_page_says_the_earlier_sign_in_ended(tmp_path, browser):
    """Ravi signed in, the server was restarted: his next visit finds the sign-in page with
    the reason and that his ticket is still his; signed in again, he is told the last score
    recorded as his (a score sent as the server stopped is recorded though its confirmation
    never arrived); a browser that never signed in, or that signed out, is not told so."""
    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=4)
    ravi = study.add_assistant("Ravi")
    browser.delete_all_cookies()
    with served(db) as base:
        browser.get(f"{base}/study/lab/assistant")
        assert not browser.find_elements(By.ID, "signin-ended")
        _sign_in(browser, base, ravi)
        assert _text(browser, ".flash") == "Signed in as Ravi."  # nothing told by him yet
        told, team = _ask(browser)
        _review(browser, told, "63")
        _record(browser, told, "63")
        tid, _ = _ask(browser)
    with served(db) as base:  # the server restarted
        browser.get(f"{base}/study/lab/assistant")
        assert _text(browser, "#signin-ended").startswith("This browser's earlier sign-in has ended (the server was "
                                                          "restarted")
        _sign_in(browser, base, ravi)
        assert _text(browser, ".flash").startswith(
            f"Signed in as Ravi. The last score recorded as told by you: 63 for ticket #{told} ({', '.join(team)}), at ")
        assert "this is the score that was recorded: do not enter it again." in _text(browser, ".flash")
        assert browser.find_elements(By.ID, f"ticket-{tid}")
        browser.find_element(By.CSS_SELECTOR, "form[action='/signout'] button").click()
        _wait(browser, lambda d: d.current_url.rstrip("/") == base)  # signed out: the list of studies
        browser.get(f"{base}/study/lab/assistant")
        assert browser.find_elements(By.ID, "token") and not browser.find_elements(By.ID, "signin-ended")


def test_a_score_sent_after_the_sign_in_ended_comes_back_after_signing_in_again(tmp_path, browser):
    """Ravi's sign-in ended while he was on the confirmation page (a restart, or 12 hours
    idle): *Record* is refused, nothing recorded, and the refusal's link signs him in and
    brings back the confirmation of the same score, recorded with one more press. The link
    goes nowhere but that study's own pages."""
    By = _by()
    with _signed_in(tmp_path, browser) as (study, base, ravi):
        tid, _ = _ask(browser)
        _review(browser, tid, "63")
        browser.delete_cookie("combex_session")  # the server no longer knows this browser's sign-in
        browser.find_element(By.ID, "confirm").click()
        _wait(browser, lambda d: d.find_elements(By.ID, "refused-next"))
        assert _text(browser, "h1") == "Sign in again" and study.summary()["evaluations"] == 4
        assert _text(browser, "#refused-next") == f"Sign in again, then confirm 63 for ticket #{tid} (nothing to type again)"
        browser.find_element(By.ID, "refused-next").click()
        _wait(browser, lambda d: d.find_elements(By.ID, "signin-next"))
        browser.find_element(By.ID, "token").send_keys(ravi)
        browser.find_element(By.ID, "signin").click()
        _wait(browser, lambda d: d.find_elements(By.ID, "confirm"))
        assert "63" in _text(browser, "body") and study.summary()["evaluations"] == 4
        _record(browser, tid, "63")
        assert study.summary()["evaluations"] == 5
        for elsewhere in ("https://example.com/", "//example.com/", f"{base}/study/lab/confirm?ticket=1",
                          "/study/other/assistant", "/"):
            browser.delete_all_cookies()
            browser.get(f"{base}/study/lab/assistant?{urllib.parse.urlencode({'next': elsewhere})}")
            assert not browser.find_elements(By.ID, "signin-next") and not browser.find_elements(
                By.CSS_SELECTOR, "input[name=next]")


def _ravi_records_mias_ticket_while(tmp_path, browser, monkeypatch, meanwhile):
    """Ravi presses *Record* 63 on Mia's ticket, and ``meanwhile(db, tell)`` (``tell``: the
    storage's own ``Study.tell``) happens between his page's read and his write: ``(study,
    ticket, the flash he reads)``."""
    By = _by()
    db = str(tmp_path / "lab.db")
    with _mias_ticket_seen_by_ravi(tmp_path, browser) as (study, base, tid, _, _mia, _ravi):
        browser.find_element(By.CSS_SELECTOR, "#others-tickets summary").click()
        _review(browser, tid, "63")
        told, done = cs.Study.tell, []

        def tell_after(self, ticket, reward_sum, *, assistant=None):
            if not done:
                done.append(meanwhile(db, told))
            return told(self, ticket, reward_sum, assistant=assistant)

        monkeypatch.setattr(cs.Study, "tell", tell_after)
        browser.find_element(By.ID, "confirm").click()
        _wait(browser, lambda d: "63" in _text(d, ".flash"))
        return study, tid, _text(browser, ".flash")


def test_two_assistants_recording_one_ticket_at_once_are_told_who_recorded_it(tmp_path, browser, monkeypatch):
    """Ravi presses *Record* on Mia's ticket in the moment Mia's own score goes in (both
    pages saw it out): his page says hers is recorded, by whom, and that nothing more was;
    not the storage's refusal."""
    def mia_first(db, tell):
        lab = cs.load_study(storage=db, name="lab")
        return tell(lab, lab.pending()[0].id, 58, assistant="Mia")

    study, tid, flash = _ravi_records_mias_ticket_while(tmp_path, browser, monkeypatch, mia_first)
    assert flash == f"Ticket #{tid} is recorded: 58 by Mia. Nothing more was recorded. Your 63 was not recorded."
    rows = {r["id"]: r for r in study.trials_dataframe().to_dict("records")}
    assert (rows[tid]["reward_sum"], rows[tid]["told_by"]) == (58, "Mia")


def test_a_score_recorded_as_the_study_stops_is_told_as_every_assistant_is(tmp_path, browser, monkeypatch):
    """The owner stops the study in the moment Ravi presses *Record* on Mia's ticket (his
    page saw the study running): his page says the study has stopped and the ticket was
    cancelled, as every assistant's page says it; not the storage's refusal."""
    study, tid, flash = _ravi_records_mias_ticket_while(
        tmp_path, browser, monkeypatch, lambda db, tell: cs.load_study(storage=db, name="lab").stop())
    assert flash == (f"The study has stopped (stopped by the owner): ticket #{tid} was cancelled and its score is not "
                     "needed. Nothing was recorded: your 63 was not. If its session was run all the same, note the "
                     "score with the ticket number for the owner: the study's answer does not need it, the lab's "
                     "records may.")
    assert study.summary()["evaluations"] == 4


def test_an_assistant_finds_her_ticket_released_by_the_owner_and_enters_its_score(tmp_path, browser):
    """The owner released Mia's ticket while she was in session: her page lists it under
    *Your tickets handed back without a score*, and the score she enters there counts."""
    By = _by()
    with _holding_a_ticket(tmp_path, browser, assistant="Mia") as (study, base, tid, team):
        study.release(tid)  # the owner
        time.sleep(0.5)  # the pages' snapshot of the study is kept a quarter of a second here
        browser.get(f"{base}/study/lab/assistant")
        _wait(browser, lambda d: d.find_elements(By.ID, "handed-back"))
        assert browser.find_elements(By.ID, "no-tickets")
        assert _text(browser, "#handed-back summary") == "Your tickets handed back without a score (1)"
        assert browser.find_elements(By.CSS_SELECTOR, "#handed-back[open]")  # open: it is news to her
        card = browser.find_element(By.ID, f"ticket-{tid}")
        assert "released without a score by the owner, " in card.text
        assert not card.find_elements(By.CSS_SELECTOR, "form.release")
        assert [m.text for m in card.find_elements(By.CSS_SELECTOR, ".member")] == team
        assert study.events()[-1]["text"] == (
            f"The owner released ticket #{tid} ({', '.join(team)}), asked by Mia, without a score after 4 "
            "evaluations.")
        _review(browser, tid, "58")
        _record(browser, tid, "58")
        rows = {r["id"]: r for r in study.trials_dataframe().to_dict("records")}
        assert (rows[tid]["state"], rows[tid]["reward_sum"], rows[tid]["told_by"]) == ("told", 58, "Mia")
        assert not browser.find_elements(By.ID, "handed-back")


def test_a_ticket_held_long_is_marked_on_its_assistants_page_and_the_owners(tmp_path, browser):
    """A ticket out while more than ``2 m + 2`` scores were told is overdue: the assistant
    holding it and the owner's list of tickets out both mark it "held long" (the study goes
    on without it; its score still counts)."""
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=12)
    token = study.add_assistant("Sol")
    gen = np.random.default_rng(5)
    with served(db) as base:
        _sign_in(browser, base, token)
        tid, _ = _ask(browser)
        for _ in range(6):  # other sessions told meanwhile
            t = study.ask()
            study.tell(t.id, session_score(t, gen))
        assert [t.overdue for t in study.pending() if t.id == tid] == [True]
        for who in (token, OWNER):
            _sign_in(browser, base, who)
            _wait(browser, lambda d: d.refresh() or "held long" in _text(d, f"#ticket-{tid} .ticket-head"))
            held = _text(browser, f"#ticket-{tid} .ticket-head")
            assert "held long: the study goes on without waiting for it; its score still counts" in held


def test_a_recorded_slip_stays_marked_far_from_the_others_until_corrected(tmp_path, browser):
    """A score recorded despite the warning (4.5 for 45.5) is marked "far from the others" in
    the assistant's told scores and the owner's, by the rule of the warning; corrected, the
    mark goes."""
    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=10)
    token = study.add_assistant("Ravi")
    t = study.ask(assistant="Ravi")
    study.tell(t.id, 4.5, assistant="Ravi")
    with served(db) as base:
        for who in (token, OWNER):
            _sign_in(browser, base, who)
            _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"tr.told-row[data-ticket='{t.id}']"))
            assert "far from the others" in _text(browser, f"tr.told-row[data-ticket='{t.id}']")
            assert len(browser.find_elements(By.CSS_SELECTOR, "tr.told-row .far")) == 1  # the 10 others are not
        study.correct(t.id, 45.5, reason="decimal point", assistant="Ravi")
        _wait(browser, lambda d: d.refresh() or "45.5" in _text(d, f"tr.told-row[data-ticket='{t.id}']"))
        assert not browser.find_elements(By.CSS_SELECTOR, "tr.told-row .far")


def test_back_from_the_review_and_after_record_shows_pages_not_a_form_sent_again(tmp_path, browser):
    """*Review* answers with a redirect to the confirmation page: *Back* from it is the
    assistant's page, *Forward* the confirmation again (no "Confirm Form Resubmission");
    after *Record*, *Back* twice reaches the confirmation of a ticket now recorded, which
    says so and records nothing."""
    By = _by()
    with _holding_a_ticket(tmp_path, browser) as (study, base, tid, _):
        _review(browser, tid, "55")
        assert "/study/lab/confirm?" in browser.current_url
        browser.back()
        _wait(browser, lambda d: d.find_elements(By.ID, f"score-{tid}"))
        browser.forward()
        _wait(browser, lambda d: d.find_elements(By.ID, "confirm"))
        assert _text(browser, "#confirm-score") == "55"
        _record(browser, tid, "55")
        browser.back()
        _wait(browser, lambda d: "/study/lab/assistant" in d.current_url or d.find_elements(By.CSS_SELECTOR, ".flash"))
        _wait(browser, lambda d: f"Ticket #{tid} is recorded: 55 by Ravi. Nothing more was recorded." in
              _text(d, "body"))
        assert study.summary()["evaluations"] == 5


def test_the_owner_stops_the_study_now_and_an_assistant_cannot(tmp_path, browser):
    """The owner's page has 'Stop the study now' (a confirming box required); the study
    ends on the evaluations told with the leader and delta_achieved; an assistant's page has
    no such form and a post of it as an assistant is refused."""
    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=12)
    token = study.add_assistant("Ravi")
    with served(db) as base:
        _sign_in(browser, base, token)
        assert not browser.find_elements(By.ID, "stop-form")
        status = _post_from_page(browser, "/study/lab/stop", confirm="1")
        assert status[0] == 403 and "only the study&#39;s owner can stop it" in status[1] and study.status == "running"
        tid, _ = _ask(browser)
        _sign_in(browser, base, OWNER)
        browser.find_element(By.ID, "stop-confirm").click()
        browser.find_element(By.ID, "stop").click()
        _wait(browser, lambda d: "The study is stopped" in _text(d, ".flash"))
        assert study.status == "budget_exhausted"
        best = study.best()
        assert best["evaluations"] == 12 and best["budget"] == 12 and len(best["leader"]["names"]) == 4
        assert isinstance(best["delta_achieved"], float)
        assert not browser.find_elements(By.ID, "stop-form")
        assert {t["id"]: t["state"] for t in study.trials_dataframe().to_dict("records")}[tid] == "cancelled"
        browser.get(f"{base}/study/lab")
        _wait(browser, lambda d: _text(d, "#status") == "stopped by the owner")  # the status says who


def test_the_owner_sets_the_budget_in_the_browser_and_an_assistant_cannot(tmp_path, browser):
    """The owner's page has a budget form: raising it lets the study run on; a budget at or
    below the evaluations told is refused with the reason (a typo cannot end the study: the
    stop has its own confirmed form); after a stop the same form continues the study with a
    larger budget. An assistant's page has no such form, a post of it as an assistant is
    refused, and the owner's page lists every assistant's tickets under its own heading (a
    score the owner enters for an assistant's ticket is checked with a warning); the study
    page lists the budget changes, the stop and the continuation in words."""
    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=12)
    token = study.add_assistant("Ravi")
    with served(db) as base:
        _sign_in(browser, base, token)
        assert not browser.find_elements(By.ID, "budget-form")
        assert _text(browser, "section h2") == "Your tickets"
        status = _post_from_page(browser, "/study/lab/budget", budget="13")
        assert status[0] == 403 and "only the study&#39;s owner can change its budget" in status[1]
        assert "<h1>Refused</h1>" in status[1] and study.summary()["budget"] is None
        tid, _ = _ask(browser)
        _sign_in(browser, base, OWNER)
        assert _text(browser, "section h2") == "Tickets out (every assistant's)"
        assert _text(browser, "#owner-tools") == "The owner's tools: Budget · Stop the study now · Told scores"
        assert "(asked by Ravi)" in _text(browser, f"#ticket-{tid}")
        browser.find_element(By.ID, f"score-{tid}").send_keys("61")  # the owner types into Ravi's ticket: warned
        browser.find_element(By.CSS_SELECTOR, f"#ticket-{tid} form.enter button").click()
        _wait(browser, lambda d: d.find_elements(By.ID, "confirm-others"))
        assert _text(browser, "#confirm-others").startswith("This ticket is Ravi's: record its score here only if "
                                                            "the session was run and Ravi will not enter it")
        browser.find_element(By.ID, "change").click()
        _wait(browser, lambda d: d.find_elements(By.ID, "budget"))
        assert "The study has no budget: it runs until the stopping rule holds" in _text(browser, "body")
        for typed, flash in [("500", "The budget is now 500 evaluations (the study is running)."),
                             ("5", "Budget not changed: 12 evaluations are already told, so the budget must be above "
                                   "12 (to end the study now, use Stop the study now). Got 5."),
                             ("12", "Got 12."),
                             ("12.5", "Budget not changed: the budget is a positive whole number of evaluations "
                                      "(digits only, such as 900). Got '12.5'."),
                             ("-5", "Got '-5'."),
                             ("99999999999999999999", "Budget not changed: 99,999,999,999,999,999,999 evaluations "
                                                      "is more than a study can count")]:
            box = browser.find_element(By.ID, "budget")
            box.clear()
            box.send_keys(typed)
            browser.find_element(By.ID, "set-budget").click()
            _wait(browser, lambda d, f=flash: f in _text(d, ".flash"))
            if "not changed" in flash:  # a refused budget stays in its box, to be mended, said beside it
                assert browser.find_element(By.ID, "budget").get_attribute("value") == typed
                assert flash in _text(browser, "#budget-section .flash")
                assert browser.current_url.endswith("#budget-section")
        assert study.summary()["budget"] == 500 and study.status == "running"
        assert "stops at 500 evaluations" in _text(browser, "body")
        browser.find_element(By.ID, "stop-confirm").click()
        browser.find_element(By.ID, "stop").click()
        _wait(browser, lambda d: "The study is stopped" in _text(d, ".flash"))
        assert study.status == "budget_exhausted" and not browser.find_elements(By.ID, "stop-form")
        assert "A budget above 12 continues it" in _text(browser, "#budget-continue")
        assert _text(browser, ".status-line").startswith(  # who stopped it, and the budget it had
            "Status stopped by the owner — 12 evaluations told (the budget was 500).")
        browser.get(f"{base}/study/lab")
        _wait(browser, lambda d: _text(d, "#status") == "stopped by the owner")
        assert _text(browser, "#verdict .evaluations .card-note").startswith(
            "stopped by the owner (the budget was 500); 0 pending")
        _wait(browser, lambda d: "nothing certified: no error probability below 1 can be claimed for this answer "
                                 "(a larger budget continues the study)" in _text(d, "#verdict"))
        browser.get(f"{base}/study/lab/assistant")
        box = browser.find_element(By.ID, "budget")
        box.clear()
        box.send_keys("40")
        assert browser.find_element(By.ID, "set-budget").text == "Continue the study"
        browser.find_element(By.ID, "set-budget").click()
        _wait(browser, lambda d: "The budget is now 40 evaluations (the study is running)." in _text(d, ".flash"))
        assert study.status == "running" and browser.find_elements(By.ID, "stop-form")
        assert [(h["event"], h["to"]) for h in study.summary()["history"] if "to" in h] == [
            ("budget", 500), ("stopped_by_owner", 12), ("budget", 40)]
        browser.get(f"{base}/study/lab")  # the study page lists the history in words
        _wait(browser, lambda d: "continued the stopped study" in _text(d, "#events"))
        texts = [e["text"] for e in study.events()]
        assert [li.text.split(" UTC ", 1)[1] for li in browser.find_elements(By.CSS_SELECTOR, "#events li")] == texts
        assert texts[0] == "The owner changed the budget from none to 500 evaluations after 12 evaluations."
        assert texts[1].startswith("The owner stopped the study after 12 evaluations; answer (not certified): ")
        assert texts[2].startswith("The owner continued the stopped study with a budget of 40 evaluations after 12 "
                                   "evaluations (its answer then: ")
        assert study.ask() is not None


def test_a_wrong_token_is_not_signed_in(tmp_path, browser):
    By = _by()
    db = str(tmp_path / "lab.db")
    lab_study(db)
    with served(db) as base:
        browser.get(f"{base}/study/lab/assistant")
        browser.find_element(By.ID, "token").send_keys("not-a-token-of-this-study")
        browser.find_element(By.ID, "signin").click()
        _wait(browser, lambda d: d.find_elements(By.ID, "refused"))
        assert _text(browser, "h1") == "Not signed in" and browser.title == "combex: not signed in"
        assert "not an assistant token of this study" in _text(browser, "#refused")


def test_the_how_sure_card_says_when_nothing_is_certified_yet(tmp_path, browser):
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=16)
    assert study.best()["delta_achieved"] == 1.0
    with served(db) as base:
        browser.get(f"{base}/study/lab")
        _wait(browser, lambda d: "nothing certified yet" in _text(d, "#verdict"))
        assert "would hold now" not in _text(browser, "#verdict")


def test_the_owner_reads_a_forecast_from_the_study_page(tmp_path, browser):
    """The study page links to a forecast (the study continued in simulated sessions);
    the page shows the same figures as ``Study.forecast``, is kept until the next told
    score, says why there is none too early, and refuses a bad number of continuations."""
    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=90)
    study.set_budget(300)
    expected = study.forecast(runs=20).summary()
    early = lab_study(db, name="early", told=2)
    del early
    with served(db) as base:
        browser.get(f"{base}/study/lab")
        _wait(browser, lambda d: d.find_elements(_by().ID, "forecast-link"))
        browser.find_element(_by().ID, "forecast-link").click()
        _wait(browser, lambda d: d.find_elements(_by().ID, "forecast-cards"), timeout=120)
        assert _text(browser, "#fc-by-budget") == f"{expected['certified_by_budget']} of 20"
        assert _text(browser, "#fc-leader") == f"{expected['leader_good']} of 20"
        dots = browser.find_elements(By.CSS_SELECTOR, "#forecast-plot circle.fc-dot")
        assert len(dots) == 20 and sum(d.get_attribute("fill") == "#fff" for d in dots) == 20 - expected["certified"]
        xs = [float(d.get_attribute("cx")) for d in dots]
        assert xs == sorted(xs)  # in the order of the evaluations they needed
        assert browser.find_element(By.CSS_SELECTOR, "#forecast-plot").is_displayed()
        median = expected["median_more"]
        assert _text(browser, "#fc-median") == (f"{median:,.0f}" if median is not None else
                                                f"over {expected['horizon']:,}")
        lines = _text(browser, "#forecast-lines")
        assert lines.startswith("Forecast for study 'lab' after 90 evaluations, budget 300: 20 simulated")
        assert "only the stopping rule's certificate carries" in lines
        assert browser.find_element(_by().ID, "forecast-more").get_attribute("href").endswith("/forecast?runs=100")
        browser.get(f"{base}/study/early/forecast")
        _wait(browser, lambda d: d.find_elements(_by().ID, "forecast-error"))
        assert "determine every worker's contribution first" in _text(browser, "#forecast-error")
        browser.get(f"{base}/study/lab/forecast?runs=abc")
        _wait(browser, lambda d: d.find_elements(_by().ID, "refused"))
        assert "The 'runs' parameter of the forecast must be a whole number from 1 to 200. Got 'abc'." == \
            _text(browser, "#refused")


def test_pages_do_not_scroll_sideways_on_a_phone(tmp_path, browser):
    """At a phone's width the wide tables (members, told evaluations, studies) scroll inside
    their box; the page itself does not scroll sideways; an assistant's told scores are
    listed as blocks, so the "correct" of each is on screen."""
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=60)
    token = study.add_assistant("Ravi")
    size = browser.get_window_size()
    try:
        browser.set_window_size(390, 800)
        with served(db) as base:
            for path in ("/", "/study/lab"):
                browser.get(base + path)
                _wait(browser, lambda d: d.find_elements(_by().CSS_SELECTOR, "table tbody tr"))
                widths = browser.execute_script(
                    "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
                assert widths[0] <= widths[1], (path, widths)
            _sign_in(browser, base, token)
            tid, _ = _ask(browser)
            widths = browser.execute_script(
                "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            assert widths[0] <= widths[1], ("assistant page", widths)
            _enter(browser, tid, "61")  # a told score: its "correct" is on screen, not scrolled off to the side
            _wait(browser, lambda d: d.find_elements(_by().ID, "confirm"))
            browser.find_element(_by().ID, "confirm").click()
            _wait(browser, lambda d: d.find_elements(_by().CSS_SELECTOR, f"tr.told-row[data-ticket='{tid}'] summary"))
            right, inner = browser.execute_script(
                "var r = document.querySelector(\"tr.told-row[data-ticket='" + str(tid) + "'] summary\")"
                ".getBoundingClientRect(); return [r.right, window.innerWidth]")
            assert 0 < right <= inner, (right, inner)
    finally:
        browser.set_window_size(size["width"], size["height"])


def test_before_any_evaluation_no_team_is_called_the_leader(tmp_path, browser):
    """With nothing told, the solver's first pick is not shown as a leader: the list of
    studies, the study page's cards and its certificate say so."""
    db = str(tmp_path / "lab.db")
    study = lab_study(db)
    assert study.best()["certificate_text"] == "No evaluation told yet: the study has a leader after the first scores."
    with served(db) as base:
        browser.get(f"{base}/")
        _wait(browser, lambda d: d.find_elements(_by().CSS_SELECTOR, "tr.study-row"))
        assert _text(browser, "tr.study-row td.leader") == "-"
        browser.get(f"{base}/study/lab")
        _wait(browser, lambda d: "No evaluation told yet" in _text(d, "#certificate"))
        leader = _text(browser, "#verdict .card.leader")
        assert "Ana" not in leader and "its stopping rule has not checked yet" in leader


def test_a_score_entered_after_the_stop_is_told_why_it_is_not_needed(tmp_path, browser):
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=12)
    token = study.add_assistant("Ravi")
    with served(db) as base:
        _sign_in(browser, base, token)
        tid, _ = _ask(browser)
        study.stop()  # the owner stops the study while Ravi's session runs
        _enter(browser, tid, "55")
        _wait(browser, lambda d: d.find_elements(_by().CSS_SELECTOR, ".flash"))
        assert _text(browser, ".flash") == (f"The study has stopped (stopped by the owner): ticket #{tid} was cancelled "
                                            "and its score is not needed. Nothing was recorded. If its session was "
                                            "run all the same, note the score with the ticket number for the owner: "
                                            "the study's answer does not need it, the lab's records may.")


def test_an_ask_refused_by_the_budget_names_the_tickets_that_hold_it(tmp_path, browser):
    """The last evaluation of the budget is out with Mia: Sol's ask gets no ticket, and the
    page says which ticket holds what is left (number, assistant, age) and that the owner can
    release it."""
    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=12)
    tokens = {a: study.add_assistant(a) for a in ("Mia", "Sol")}
    study.set_budget(13)
    held = study.ask(assistant="Mia")
    with served(db) as base:
        _sign_in(browser, base, tokens["Sol"])
        browser.find_element(By.ID, "ask").click()
        _wait(browser, lambda d: "No ticket right now" in _text(d, ".flash"))
        assert re.fullmatch(
            rf"No ticket right now: every evaluation the solver can use is out \(the budget of 13 evaluations has 1 "
            rf"left, and the 1 ticket out holds it: #{held.id} \(Mia, asked \d+ s ago\); the owner can release a "
            r"ticket that will not come back\)\. Ask again when pending tickets are told\.", _text(browser, ".flash"))


def test_an_assistant_finds_her_cancelled_tickets_with_why_and_what_to_do(tmp_path, browser):
    """Tickets a stop cancelled (the owner's stop; a budget set to the evaluations told) are
    listed on their assistant's page, newest first, each with its team by name, why and
    when, and the advice: do not score it, note a score taken on paper for the owner. Each
    assistant sees only her own; the owner's page lists none."""
    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=12)
    tokens = {a: study.add_assistant(a) for a in ("Mia", "Ravi", "Sol")}
    mia1, ravi1 = study.ask(assistant="Mia"), study.ask(assistant="Ravi")
    study.stop()
    study.set_budget(20)  # the owner continues the study
    mia2 = study.ask(assistant="Mia")
    study.set_budget(12)  # ... and ends it again: the budget is the evaluations told
    assert {t["id"]: t["state"] for t in study.trials_dataframe().to_dict("records")}[mia2.id] == "cancelled"
    with served(db) as base:
        _sign_in(browser, base, tokens["Mia"])
        box = _wait(browser, lambda d: d.find_element(By.ID, "cancelled"))
        assert box.get_attribute("open") is not None
        assert _text(browser, "#cancelled summary") == "Your tickets cancelled (2)"
        assert ("Do not score a cancelled ticket: the study takes no score for it. If its session was run all the "
                "same, note the score with the ticket number for the owner: the study's answer does not need it, the "
                "lab's records may.") in box.text
        cards = box.find_elements(By.CSS_SELECTOR, ".ticket")
        assert [int(c.get_attribute("data-ticket")) for c in cards] == [mia2.id, mia1.id]  # newest first
        for card, t in zip(cards, (mia2, mia1)):
            assert [m.text for m in card.find_elements(By.CSS_SELECTOR, ".member")] == list(t.names)
            assert not card.find_elements(By.CSS_SELECTOR, "form")  # nothing to score
        assert re.fullmatch(rf"Ticket #{mia2.id} cancelled \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC: the owner set the "
                            r"budget to 12 evaluations, the number already told, which stopped the study",
                            _text(browser, f"#cancelled-{mia2.id} .ticket-head"))
        assert _text(browser, f"#cancelled-{mia1.id} .ticket-head").endswith(": the owner stopped the study")
        _sign_in(browser, base, tokens["Ravi"])
        assert [int(c.get_attribute("data-ticket")) for c in
                browser.find_elements(By.CSS_SELECTOR, "#cancelled .ticket")] == [ravi1.id]
        _sign_in(browser, base, tokens["Sol"])  # held none
        assert not browser.find_elements(By.ID, "cancelled")
        _sign_in(browser, base, OWNER)
        assert not browser.find_elements(By.ID, "cancelled")


def test_the_confirmation_pages_say_who_is_signed_in(tmp_path, browser):
    """The score's and the correction's confirmation pages name the signed-in assistant as
    the assistant's page does (the same line, with its sign-out)."""
    By = _by()
    with _holding_a_ticket(tmp_path, browser, assistant="Mia") as (study, base, tid, _):
        line = _text(browser, ".signed-in")
        assert line.startswith("Signed in to lab as Mia")
        _review(browser, tid, "61")
        assert _text(browser, ".signed-in") == line
        assert browser.find_elements(By.CSS_SELECTOR, ".signed-in form[action='/signout'] button")
        _record(browser, tid, "61")
        row = browser.find_element(By.CSS_SELECTOR, f"tr.told-row[data-ticket='{tid}']")
        row.find_element(By.TAG_NAME, "summary").click()
        row.find_element(By.NAME, "score").send_keys("16")
        row.find_element(By.NAME, "reason").send_keys("typed 61 for 16")
        row.find_element(By.CSS_SELECTOR, "form.correct button").click()
        _wait(browser, lambda d: _text(d, "#confirm-score") == "16")
        assert _text(browser, ".signed-in") == line


def test_every_form_box_has_a_font_of_16px_at_least(tmp_path, browser):
    """A box with a smaller font zooms the page on focus in iOS Safari: every input and
    select of the owner's page and an assistant's page has a computed font size of 16px or
    more, at a desktop's and a phone's width."""
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=6)
    token = study.add_assistant("Ravi")
    t = study.ask(assistant="Ravi")
    study.tell(t.id, 60.0, assistant="Ravi")  # a told score: its correction form
    study.ask(assistant="Ravi")  # a ticket out: its score box
    size = browser.get_window_size()
    try:
        with served(db) as base:
            for who in (OWNER, token):
                _sign_in(browser, base, who)
                for width in (1200, 390):
                    browser.set_window_size(width, 900)
                    browser.get(f"{base}/study/lab/assistant")
                    sizes = browser.execute_script("""
                        return Array.from(document.querySelectorAll('input, select, textarea'))
                            .filter(e => e.type !== 'hidden')
                            .map(e => [e.name || e.id, parseFloat(getComputedStyle(e).fontSize)]);""")
                    names = {n for n, _ in sizes}
                    assert {"score", "reason", "void"} <= names, names
                    if who == OWNER:
                        assert {"budget", "confirm"} <= names, names
                    small = [(n, px) for n, px in sizes if px < 16]
                    assert not small, (who == OWNER, width, small)
    finally:
        browser.set_window_size(size["width"], size["height"])


def test_an_identified_study_has_no_evaluations_left(tmp_path, browser):
    db = str(tmp_path / "lab.db")
    problem = cs.problem_spec(workers=WORKERS[:4], team_size=2, score_range=(0, 100), noise_scale=5)
    study = cs.create_study(storage=db, name="lab", problem=problem, solver="top-two",
                            solver_params={"delta": 0.05}, seed=0)
    quality, gen = [40, 30, 10, 5], np.random.default_rng(0)
    while study.status == "running":
        t = study.ask()
        study.tell(t.id, float(np.clip(round(sum(quality[i] for i in t.arm) + gen.normal(0, 5), 1), 0, 100)))
    assert study.status == "identified"
    with served(db) as base:
        browser.get(f"{base}/study/lab")
        value = _wait(browser, lambda d: _text(d, "#verdict .evaluations-left .card-value"))
        assert value == "none"  # not "about 0"
        note = _text(browser, "#verdict .evaluations-left .card-note")
        assert note == "the stopping rule holds: no more evaluations are needed"


def test_evaluations_left_above_the_budget_is_one_short_line_on_the_card(tmp_path, browser):
    """The estimate of the evaluations left is above what the budget leaves: the study page's
    card says so in one line; the whole note (how rough the estimate is, how to raise the
    budget) stays in the certificate text, without brackets inside brackets."""
    db = str(tmp_path / "lab.db")
    problem = cs.problem_spec(workers=WORKERS[:6], team_size=2, score_range=(0, 100), noise_scale=5)
    study = cs.create_study(storage=db, name="lab", problem=problem, solver="top-two",
                            solver_params={"delta": 0.05}, seed=0)
    quality, gen = [40, 38, 30, 20, 10, 5], np.random.default_rng(0)
    while study.best()["evaluations_left"] is None or study.best()["evaluations_left"] < 3:
        t = study.ask()
        study.tell(t.id, float(np.clip(round(sum(quality[i] for i in t.arm) + gen.normal(0, 5), 1), 0, 100)))
        assert study.status == "running"
    told = study.summary()["evaluations"]
    study.set_budget(told + 2)
    b = study.best()
    assert b["evaluations_left_note"].startswith("more than the 2 the budget leaves: the budget may end the study")
    assert "more evaluations may be needed: more than the 2 the budget leaves" in b["certificate_text"]
    with served(db) as base:
        browser.get(f"{base}/study/lab")
        note = _wait(browser, lambda d: _text(d, "#verdict .evaluations-left .card-note"))
        assert note == ("more than the 2 the budget leaves: the budget may end the study first, uncertified, unless "
                        "the owner raises it (a rough estimate, mostly high early on)")


def test_early_on_the_evaluations_left_says_it_is_too_early(tmp_path, browser):
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=30)
    b = study.best()
    assert b["evaluations_left"] is None and b["statistic"] < 0.05 * b["threshold"]
    with served(db) as base:
        browser.get(f"{base}/study/lab")
        note = _wait(browser, lambda d: _text(d, "#verdict .evaluations-left .card-note"))
        assert _text(browser, "#verdict .evaluations-left .card-value") == "-"
        assert note.startswith("too early to estimate: the stopping statistic is under 5% of its threshold")


def test_the_page_of_an_unknown_study_links_only_to_pages_that_exist(tmp_path, browser):
    db = str(tmp_path / "lab.db")
    lab_study(db)
    with served(db) as base:
        browser.get(f"{base}/study/nosuch")
        _wait(browser, lambda d: d.find_elements(_by().ID, "refused"))
        assert _text(browser, "h1") == "Not found"
        links = [a.get_attribute("href") for a in browser.find_elements(_by().CSS_SELECTOR, "main a")]
        assert links and not any("nosuch" in h for h in links)


def test_the_chart_shows_the_threshold_line_and_labelled_axes(tmp_path, browser):
    By = _by()
    db = str(tmp_path / "lab.db")
    lab_study(db, told=30)
    with served(db) as base:
        browser.get(f"{base}/study/lab")
        _wait(browser, lambda d: d.execute_script("return !!window.combexChart"))
        axes = browser.execute_script("return window.combexChart.axes.map(a => a.label)")
        series = browser.execute_script("return window.combexChart.series.map(s => s.label)")
        assert axes[0] == "evaluations told" and axes[1] and axes[1] == series[1]
        assert series[2] == "threshold"
        n = browser.execute_script("return window.combexChart.data[0].length")
        thr = browser.execute_script("return window.combexChart.data[2]")
        assert n >= 1 and all(v is not None for v in thr[-5:])
        red = browser.execute_script("""
            const c = document.querySelector('#chart canvas'); const g = c.getContext('2d');
            const px = g.getImageData(0, 0, c.width, c.height).data; let k = 0;
            for (let i = 0; i < px.length; i += 4) if (px[i] > 180 && px[i+1] < 90 && px[i+2] < 90) k++;
            return k;""")
        assert red > 100  # the dashed red threshold line is drawn
        cap = _text(browser, "#chart-caption")
        assert "Top-Two" in cap and "'top-two'" in cap and "threshold" in cap and "stops when" in cap


def test_a_random_design_study_names_no_leader_or_challenger_before_its_first_check(tmp_path, browser):
    """random-design checks at checkpoints (the first after 120 sessions of 12 workers):
    before it, the cards name no leader and no challenger, and say when they come; stopped
    before it (the budget), the study names its answer, no challenger, and nothing certified."""
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=30, solver="random-design")
    b = study.best()
    assert b["first_check_pending"] and b["statistic"] is None
    with served(db) as base:
        browser.get(f"{base}/study/lab")
        _wait(browser, lambda d: _text(d, "#verdict .challenger .card-value") == "-")
        assert _text(browser, "#verdict .leader .card-value") == "-"
        assert _text(browser, "#verdict .challenger .card-note") == "after the rule's first check, at 120 evaluations"
        assert _text(browser, "#chart") == "No statistic yet: the stopping rule's first check comes after 120 evaluations."
        study.set_budget(30)  # stopped before that check: the answer, nothing certified, no challenger
        b = study.best()
        assert b["status"] == "budget_exhausted" and b["leader"]["names"] and b["challenger"] is None
        assert b["delta_achieved"] == 1.0 and "nothing is certified" in b["certificate_text"]
        browser.get(f"{base}/study/lab")
        _wait(browser, lambda d: _text(d, "#verdict .challenger .card-note") ==
              "the study stopped before the rule's first check")
        assert _text(browser, "#verdict .delta-achieved .card-value") == "1"
        assert _text(browser, "#verdict .delta-achieved .card-note").startswith("nothing certified: no error probability")


def test_the_chart_of_a_study_checking_at_set_points_draws_its_checks_only(tmp_path):
    """random-design checks after 120 sessions and next at 144: at 125 told the history has a
    point per told score, all five after the check repeating its values; the page's chart
    data draws the check once (no point at 121-125 that looks like a check)."""
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=125, solver="random-design")
    b = study.best()
    assert b["checked_at"] == 120 and b["next_check_at"] == 144
    hist = study.history()[-6:]
    assert [p["evaluation"] for p in hist] == [120, 121, 122, 123, 124, 125]
    assert len({(p["statistic"], p["threshold"]) for p in hist}) == 1
    with served(db) as base:
        doc = json.loads(urllib.request.urlopen(base + "/api/study/lab", timeout=30).read())
    assert doc["history"]["evaluations"] == [120]
    assert doc["history"]["statistic"] == [pytest.approx(b["statistic"])]


def test_the_owner_is_told_when_a_budget_falls_between_two_checks(tmp_path, browser):
    """random-design checks after 120, 144, ..., 620, 744 sessions: a budget of 700 is
    confirmed with the sentence that sessions 621-700 cannot certify, and the *Budget*
    section says it until the budget is set on a check."""
    By = _by()
    db = str(tmp_path / "lab.db")
    lab_study(db, told=125, solver="random-design")
    with served(db) as base:
        _sign_in(browser, base, OWNER)
        assert not browser.find_elements(By.ID, "budget-checks")  # no budget: nothing to say
        note = ("This solver checks its stopping rule at set points: the last before the budget of 700 is after 620 "
                "evaluations, the next after 744; evaluations 621 to 700 cannot certify the answer, so a budget of "
                "620 or 744 spends none in vain.")
        for typed, said in (("700", True), ("744", False)):
            box = browser.find_element(By.ID, "budget")
            box.clear()
            box.send_keys(typed)
            browser.find_element(By.ID, "set-budget").click()
            _wait(browser, lambda d, t=typed: f"The budget is now {t} evaluations" in _text(d, ".flash"))
            assert (note in _text(browser, ".flash")) == said
            assert [e.text for e in browser.find_elements(By.ID, "budget-checks")] == ([note] if said else [])
            time.sleep(0.5)  # the pages' snapshot of the study is kept a quarter of a second here
            browser.get(f"{base}/study/lab")  # the chart's caption says it too
            _wait(browser, lambda d: "checks at set points" in _text(d, "#chart-caption"))
            assert ("; the last before the budget of 700 comes after 620 (the evaluations after it cannot certify"
                    in _text(browser, "#chart-caption")) == said
            browser.get(f"{base}/study/lab/assistant")


def test_before_and_at_the_first_check_the_chart_says_when_checks_begin(tmp_path, browser):
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=5)
    b = study.best()
    assert b["first_check_pending"] and b["statistic"] is None
    assert b["certificate_text"].startswith("After 5 evaluations the top-two rule has not checked yet: the solver's "
                                            "initial sessions come first")
    with served(db) as base:
        browser.get(f"{base}/study/lab")
        assert _wait(browser, lambda d: _text(d, "#chart")) == (
            "No statistic yet: the stopping rule's first check comes after the solver's initial sessions.")
        # no leader yet (the solver's starting point is not a reading of the data), and the
        # cards say when the leader, the challenger and the confidence come
        assert _text(browser, "#verdict .leader .card-value") == "-"
        for name in ("leader", "challenger", "delta-achieved"):
            assert _text(browser, f"#verdict .{name} .card-note") == (
                "after the solver's initial sessions (its stopping rule has not checked yet)")
        _wait(browser, lambda d: d.find_elements(_by().CSS_SELECTOR, "tr.member-row"))
        assert not browser.find_elements(_by().CSS_SELECTOR, "tr.member-row.in-leader")  # no team leads yet
        assert "no team leads yet" in _text(browser, "#estimates-validity")
        # five teams separate no member: no estimate is shown, and the note says why
        # read in one script call: the page redraws its tables every half second
        assert set(browser.execute_script(
            "return [...document.querySelectorAll('td.estimate')].map(e => e.innerText.trim())")) == {"not yet"}
        assert "cannot tell this member's contribution from the others'" in _text(browser, "#estimates-validity")
        assert not browser.find_elements(_by().CSS_SELECTOR, "circle.interval-dot")
        gen = np.random.default_rng(1)
        while not study.history():
            t = study.ask()
            study.tell(t.id, session_score(t, gen))
        first = study.history()[0]["evaluation"]
        assert not study.best()["first_check_pending"]
        browser.get(f"{base}/study/lab")
        cap = _wait(browser, lambda d: "One check" in _text(d, "#chart-caption") and _text(d, "#chart-caption"))
        assert cap.endswith(f"One check so far: the first comes after {first} evaluations (the solver's initial "
                            "sessions), more come as scores are told.")
        assert len(browser.find_elements(_by().CSS_SELECTOR, "tr.member-row.in-leader")) == 4
        # whole evaluations on the x axis: its tick steps are whole numbers
        splits = browser.execute_script("return window.combexChart.axes[0]._splits")
        assert splits and all(float(v).is_integer() for v in splits), splits


def test_a_team_study_shows_names(tmp_path, browser):
    By = _by()
    db = str(tmp_path / "lab.db")
    study = lab_study(db, told=20)
    t = study.ask()
    with served(db) as base:
        browser.get(f"{base}/study/lab")
        leader = _wait(browser, lambda d: _text(d, "#verdict .leader .card-value"))
        names = leader.split(", ")
        assert len(names) == 4 and set(names) <= set(WORKERS)
        assert names == _names(study.best()["leader"])
        # the page re-draws its sections at every poll: each read is one wait
        assert list(_wait(browser, lambda d: _estimates(d))) == WORKERS
        nl = study.noise_level()
        assert _text(browser, "#estimates-validity").startswith(
            f"The noise of one evaluation: standard deviation {nl['sd']:.3g}, estimated from the fit's residuals "
            f"({nl['dof']} degrees of freedom; combex plan --noise-sd takes it to plan a similar study).")
        row = _wait(browser, lambda d: _text(d, f"#pending tr[data-ticket='{t.id}']"))
        assert row.count(",") == 3 and all(n in row for n in t.names)
        page = _wait(browser, lambda d: _text(d, "#study"))
        assert not re.search(r"\[\d+, \d+, \d+, \d+\]", page)  # no member index lists
        browser.get(base + "/")
        assert "Top-Two" in _text(browser, "tr.study-row[data-name='lab']")
        assert set(_text(browser, "tr.study-row[data-name='lab'] .leader").split(", ")) == set(names)


def _estimates(d):
    """The members table as drawn: {name: estimate text}, read in one script call (the page
    re-draws it at every poll, faster than element-by-element reads on a busy machine)."""
    return d.execute_script("""const out = {};
        document.querySelectorAll('#estimates tr.member-row').forEach(r => {
            out[r.querySelector('.member-name').textContent] = r.querySelector('.estimate').textContent; });
        return Object.keys(out).length ? out : null;""")


def _names(leader):
    return leader["names"] if isinstance(leader, dict) else leader


# ============================================================================ reads: no write lock, degraded sections
@pytest.fixture(scope="module")
def pg():
    sys.path.insert(0, str(Path(__file__).parent))
    from _studies_helpers import PgCluster

    cluster = PgCluster()
    yield cluster
    cluster.stop()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_polls_answer_while_a_writer_holds_the_study_lock(tmp_path, request, backend):
    """A writer frozen inside the study's write transaction does not hold up the page."""
    url = str(tmp_path / "lab.db") if backend == "sqlite" else request.getfixturevalue("pg").new_database()
    study = lab_study(url, told=12)
    locked, release = threading.Event(), threading.Event()

    def writer():
        with study.storage.transaction("lab"):
            locked.set()
            release.wait(20)

    with served(url) as base:
        th = threading.Thread(target=writer)
        th.start()
        try:
            assert locked.wait(30)
            c = Client(base)
            for path in ("/api/study/lab", "/study/lab", "/api/studies", "/"):
                t0 = time.perf_counter()
                status, _, text = c.get(path)
                assert status == 200, text[:300]
                assert time.perf_counter() - t0 < 5.0, path
            snap = json.loads(c.get("/api/study/lab")[2])
            assert snap["summary"]["evaluations"] == 12 and snap["best"]["available"]
        finally:
            release.set()
            th.join(30)


def test_a_read_the_study_api_lacks_or_fails_is_a_note_not_a_crash(tmp_path):
    from combex.web._data import Scrubber, study_snapshot

    db = str(tmp_path / "lab.db")
    lab_study(db, told=3)

    class Partial(cs.Study):
        member_estimates = None  # a read this API does not have

        def history(self):
            raise cs.StorageError(f"cannot read {db}")

    st = cs.get_storage(db)
    study = Partial(st, st.get_study("lab"))
    snap = study_snapshot(study, Scrubber(db, st), now=time.time())
    assert snap["estimates"] == {"available": False, "reason": "not available: this version of combex.studies has no "
                                                                "Study.member_estimates()"}
    assert snap["history"]["available"] is False
    assert snap["history"]["reason"].startswith("Study.history() failed: cannot read the storage")
    assert db not in json.dumps(snap) and snap["best"]["available"] and snap["summary"]["evaluations"] == 3


# ============================================================================ small pieces
@pytest.mark.parametrize("text,value", [("75", 75.0), (" 7.5 ", 7.5), ("-3e1", -30.0), ("0", 0.0),
                                        ("74.123456789012", 74.123456789012)])
def test_a_typed_score_is_read_exactly(text, value):
    from combex.web._app import fmt_score, parse_score

    assert parse_score(text) == value
    assert parse_score(fmt_score(value)) == value  # what the confirmation form sends back


@pytest.mark.parametrize("text,msg", [("", "Enter the score"), ("7,5", "decimal point, not a comma"),
                                      ("seventy", "must be a number"), ("inf", "finite"), ("nan", "finite"),
                                      (None, "Enter the score")])
def test_a_bad_typed_score_is_refused_with_a_message(text, msg):
    from combex.web._app import parse_score

    with pytest.raises(ValueError, match=msg):
        parse_score(text)


@pytest.mark.parametrize("x", [0.1, 1 / 3, 99.99999999999, 1e-7, 123456789.125, -0.0, 2.0 ** 60])
def test_a_score_shown_reads_back_to_the_same_float(x):
    from combex.web._app import fmt_score

    assert float(fmt_score(x)) == x


@pytest.mark.parametrize("iso,shown", [("2026-11-27T18:31:05Z", "2026-11-27 18:31:05 UTC"), (None, "-")])
def test_a_time_is_shown_to_the_second(iso, shown):
    from combex.web._app import fmt_time

    assert fmt_time(iso) == shown  # several scores can be told within one minute


@pytest.mark.parametrize("host,local", [("127.0.0.1", True), ("127.3.4.5", True), ("localhost", True),
                                        ("::1", True), ("[::1]", True), ("0.0.0.0", False), ("::", False),
                                        ("192.168.1.20", False), ("lab-pc", False), ("localhost.evil.example", False)])
def test_loopback_addresses(host, local):
    from combex.web._security import is_loopback

    assert is_loopback(host) is local


@pytest.mark.parametrize("bad", ["http://lab-pc", "lab-pc:8050", "lab pc", "", "*", "a/b", 7])
def test_an_allowed_host_must_be_a_bare_name(bad):
    from combex.exceptions import InvalidParameterError
    from combex.web._security import allowed_hosts

    with pytest.raises(InvalidParameterError, match="The 'allowed_host' parameter of combex dashboard must be"):
        allowed_hosts("127.0.0.1", [bad])


def test_allowed_hosts_add_the_bound_address_and_the_given_names():
    from combex.web._security import allowed_hosts

    assert allowed_hosts("127.0.0.1") == ["localhost", "127.0.0.1", "[::1]"]
    assert allowed_hosts("0.0.0.0", ["Lab-PC.example.org", "192.0.2.7", "2001:db8::1"]) == [
        "localhost", "127.0.0.1", "[::1]", "lab-pc.example.org", "192.0.2.7", "[2001:db8::1]"]
    assert allowed_hosts("192.0.2.7") == ["localhost", "127.0.0.1", "[::1]", "192.0.2.7"]


@pytest.mark.parametrize("headers,ok", [
    ({}, True), ({"origin": "http://127.0.0.1:8050"}, True), ({"sec-fetch-site": "same-origin"}, True),
    ({"sec-fetch-site": "none"}, True), ({"origin": "http://127.0.0.1:8051"}, False),
    ({"origin": "http://evil.example"}, False), ({"origin": "null"}, False), ({"sec-fetch-site": "cross-site"}, False),
    ({"sec-fetch-site": "same-site"}, False), ({"origin": "https://127.0.0.1:8050"}, True),
])
def test_same_origin(headers, ok):
    from combex.web._security import same_origin

    assert same_origin(headers, "127.0.0.1:8050") is ok


def test_a_sign_in_expires_unused_and_changes_id():
    from combex.web._security import SignIns

    now = [1000.0]
    table = SignIns(max_age=60, clock=lambda: now[0])
    sid, s = table.start(None)
    s.studies["lab"] = ("Ravi", "tok")
    now[0] += 59
    assert table.get(sid) is s  # used: the clock restarts
    sid2, s2 = table.start(sid)
    assert sid2 != sid and table.get(sid) is None and s2.studies == {"lab": ("Ravi", "tok")}
    now[0] += 61
    assert table.get(sid2) is None


def test_names_typed_by_people_are_shown_not_run(tmp_path, browser):
    """Worker and assistant names with markup are text on every page (escaped templates,
    textContent in the page script)."""
    By = _by()
    db = str(tmp_path / "lab.db")
    evil = ['<img src=x onerror="document.title=\'pwned\'">', "<script>document.title='pwned'</script>", "Cleo & Co",
            'Dev "quoted"']
    workers = evil + WORKERS[4:]
    study = cs.create_study(storage=db, name="lab <b>bold</b>",
                            problem=cs.problem_spec(workers=workers, team_size=4, score_range=(0, 100)),
                            solver="top-two", solver_params={"delta": 0.05})
    gen = np.random.default_rng(0)
    for _ in range(14):
        t = study.ask()
        study.tell(t.id, session_score(t, gen))
    token = study.add_assistant("<i>Ravi</i>")
    name = urllib.parse.quote("lab <b>bold</b>", safe="")
    with served(db) as base:
        _sign_in(browser, base, token, study=name)
        assert _text(browser, "#assistant-name") == "<i>Ravi</i>"
        tid, team = _ask(browser)
        assert set(team) <= set(workers)
        for path in ("/", f"/study/{name}", f"/study/{name}/assistant"):
            browser.get(base + path)
            time.sleep(0.8)
            assert browser.title != "pwned"
            run = "img[src=x], script:not([src]):not([type='application/json'])"
            assert not browser.find_elements(By.CSS_SELECTOR, run)
            assert not [e for e in browser.find_elements(By.CSS_SELECTOR, "b, i") if e.text in ("bold", "Ravi")]
        browser.get(f"{base}/study/{name}")
        _wait(browser, lambda d: evil[0] in _text(d, "#estimates"))
        assert "lab <b>bold</b>" in _text(browser, "#study-name")
        assert browser.title != "pwned"
