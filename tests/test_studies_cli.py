"""``combex study ...`` (JSON) and ``combex dashboard`` in a real headless browser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pytest

import combex.studies as cs
from combex.cli import main

pytest.importorskip("sqlalchemy")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and out.strip() else None), err


def test_study_commands_end_to_end(tmp_path, capsys):
    db = str(tmp_path / "lab.db")
    code, doc, _ = run(capsys, "study", "create", db, "--name", "q", "--n-arms", "3", "--solver", "lucb",
                       "--param", "K=1", "--param", "delta=0.1", "--labels", "a,b,c", "--seed", "1")
    assert code == 0 and doc["name"] == "q" and doc["status"] == "running" and doc["policy"] == "eager"
    code, doc, err = run(capsys, "study", "create", db, "--name", "q", "--n-arms", "3", "--solver", "lucb",
                         "--param", "K=2")
    assert code == 2 and "already exists" in err
    code, doc, _ = run(capsys, "study", "list", db)
    assert [d["name"] for d in doc] == ["q"]
    means = [0.95, 0.1, 0.05]
    import numpy as np

    rng = np.random.default_rng(0)
    told = 0
    while True:
        code, doc, _ = run(capsys, "study", "ask", db, "--name", "q", "--n", "2")
        assert code == 0
        if doc["status"] != "running":
            assert doc["best"]["answer"] == [0] and doc["best"]["labels"] == ["a"]
            break
        results = [f"{t['id']}={rng.binomial(t['count'], means[t['arm']])}" for t in doc["tickets"]]
        code, doc, _ = run(capsys, "study", "tell", db, "--name", "q", *sum((["--result", r] for r in results), []))
        assert code == 0, doc
        told += len(results)
        if doc["status"] != "running":
            break
    code, doc, _ = run(capsys, "study", "status", db, "--name", "q")
    assert doc["status"] == "identified" and doc["best"]["answer"] == [0] and doc["evaluations"] == told
    code, doc, err = run(capsys, "study", "tell", db, "--name", "q", "--ticket", "1", "--reward-sum", "1")
    assert code == 2 and "identified" in err
    code, doc, _ = run(capsys, "study", "export", db, "--name", "q", "--out", str(tmp_path / "t.csv"))
    assert doc["rows"] >= told and (tmp_path / "t.csv").exists()
    code, doc, err = run(capsys, "study", "status", db, "--name", "nope")
    assert code == 2 and "No study named 'nope'" in err
    code, doc, _ = run(capsys, "study", "delete", db, "--name", "q")
    assert cs.get_all_study_names(db) == []


def test_tell_errors_from_the_cli(tmp_path, capsys):
    db = str(tmp_path / "lab.db")
    run(capsys, "study", "create", db, "--name", "q", "--n-arms", "3", "--solver", "lucb", "--param", "K=1")
    code, doc, _ = run(capsys, "study", "ask", db, "--name", "q")
    tid = doc["tickets"][0]["id"]
    code, _, err = run(capsys, "study", "tell", db, "--name", "q", "--ticket", str(tid), "--reward-sum", "5")
    assert code == 2 and "reward_sum" in err
    code, _, err = run(capsys, "study", "tell", db, "--name", "q", "--ticket", "77", "--reward-sum", "1")
    assert code == 2 and "no ticket 77" in err
    assert cs.load_study(storage=db, name="q").summary()["evaluations"] == 0


CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def _browser():
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
    profile = tempfile.mkdtemp(prefix="combex-chrome-")
    for f in CHROME_FLAGS + [f"--user-data-dir={profile}"]:
        opts.add_argument(f)
    return webdriver.Chrome(service=Service(driver), options=opts), profile


def test_dashboard_in_a_real_browser(tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from combex.dashboard import make_server

    db = str(tmp_path / "lab.db")
    study = cs.create_study(storage=db, name="quiz", problem=cs.problem_spec(3, labels=["ann", "bob", "cy"]),
                            solver="lucb", solver_params={"K": 1, "delta": 0.1})
    for _ in range(10):
        t = study.ask()
        study.tell(t, 1.0 if t.arm == 0 else 0.0)
    srv = make_server(db, port=0, interval=0.3)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    driver, profile = _browser()
    try:
        driver.get(f"http://127.0.0.1:{srv.server_address[1]}/")
        from selenium.common.exceptions import StaleElementReferenceException

        # the page re-renders every 0.3 s: every read retries on a stale element
        wait = WebDriverWait(driver, 30, ignored_exceptions=[StaleElementReferenceException])
        txt = lambda sel: driver.find_element(By.CSS_SELECTOR, sel).text  # noqa: E731
        ev = lambda: int(txt("#study-quiz .evaluations"))  # noqa: E731
        wait.until(lambda d: ev() == 10)
        wait.until(lambda d: "ann" in txt("#study-quiz") and txt("#study-quiz .leader") == "[0]")
        wait.until(lambda d: [c.text[:1] for c in d.find_elements(By.CSS_SELECTOR, "#study-quiz tr.arm td.ci")]
                   == ["["] * 3)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#study-quiz svg.stat-chart"))
        t = study.ask()  # a tell: the page updates by itself
        wait.until(lambda d: int(txt("#study-quiz .pending")) == 1)
        study.tell(t, 1.0 if t.arm == 0 else 0.0)
        wait.until(lambda d: ev() == 11)
        while True:  # run to the stop: the page shows the certificate
            try:
                t = study.ask()
            except cs.StudyFinishedError:
                break
            study.tell(t, 1.0 if t.arm == 0 else 0.0)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#study-quiz .status.identified"))
        wait.until(lambda d: "gap" in txt("#study-quiz .certificate"))
    finally:
        driver.quit()
        srv.shutdown()
        shutil.rmtree(profile, ignore_errors=True)


def test_dashboard_command_serves(tmp_path):
    db = str(tmp_path / "lab.db")
    cs.create_study(storage=db, name="s", problem=cs.problem_spec(3), solver="lucb", solver_params={"K": 1})
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([sys.executable, "-m", "combex.cli", "dashboard", db, "--port", str(port)],
                         stdout=subprocess.PIPE, text=True)
    try:
        assert "combex dashboard on" in p.stdout.readline()
        doc = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/studies", timeout=30).read())
        assert doc["studies"][0]["name"] == "s" and doc["studies"][0]["evaluations"] == 0
        assert b"combex studies" in urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30).read()
    finally:
        p.terminate()
        p.wait(timeout=30)


@pytest.mark.slow
def test_lab_study_example(tmp_path):
    """examples/lab_study.py: workers killed with SIGKILL midway, restarted, identified team."""
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "examples" / "lab_study.py"
    out = subprocess.run([sys.executable, str(script), str(tmp_path / "lab.db")], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr
    assert "killed 4 workers" in out.stdout and "identified after" in out.stdout
    lines = out.stdout.splitlines()
    team = [l for l in lines if l.startswith("identified team:")][0].split(":", 1)[1]
    top = [l for l in lines if l.startswith("top-5 accuracy")][0].split(":", 1)[1].split("accuracies")[0]
    assert team.strip() == top.strip()
