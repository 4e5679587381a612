"""Make the web app's screenshots of the user guide (docs/guide/studies.md): the lab case.

Twelve workers, teams of 4, a session's score in [0, 100], the noise level unknown, a budget
of 140 sessions; three assistants (Ravi, Mia, Tom) telling about ten sessions a day, Mia
correcting a slipped decimal point; then a real server and headless Chromium: the
assistant's page with a ticket, the confirmation page of 7.5 typed for 75, the study page,
the forecast page, the owner's page (the tickets out, the budget and the stop).

Run from the repository root:  python docs/guide/img/make_web_screenshots.py
(needs the ``studies`` extra, chromium and chromedriver).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # this checkout's combex

import combex.studies as cs  # noqa: E402
from combex.environments._instances_full import LAB_QUALITIES, LAB_WORKERS  # noqa: E402
from combex.web import create_app  # noqa: E402
from combex.web._cli import bind_socket  # noqa: E402

OUT = Path(__file__).resolve().parent
ASSISTANTS = ("Ravi", "Mia", "Tom")
DAY = 86400.0


def build(storage: str, sessions: int = 94) -> dict[str, str]:
    study = cs.create_study(storage=storage, name="lab",
                            problem=cs.problem_spec(workers=list(LAB_WORKERS), team_size=4, score_range=(0, 100)),
                            solver="top-two", solver_params={"delta": 0.1, "epsilon": 5.0}, budget=140, seed=3)
    tokens = {a: study.add_assistant(a) for a in ASSISTANTS}
    rng = np.random.default_rng(7)
    start = (time.time() // DAY - 10) * DAY  # midnight (UTC) ten days ago
    wrong = None
    for i in range(sessions):
        begin = start + (i // 10) * DAY + 9 * 3600 + (i % 10) * 3600.0  # ten sessions a day, hourly
        who = ASSISTANTS[i % 3]
        study.clock = lambda at=begin: at
        t = study.ask(assistant=who)
        score = float(np.clip(round(sum(LAB_QUALITIES[j] for j in t.arm) + rng.normal(0, 10), 1), 0, 100))
        if who == "Mia" and i >= sessions - 3:  # her decimal point slips (a tenth of the score)
            wrong = (t.id, score)
            score = round(score / 10, 2)
        study.clock = lambda at=begin + 1800.0 + 60.0 * float(rng.integers(0, 20)): at  # told 30-50 min later
        study.tell(t.id, score, assistant=who)
    study.clock = time.time
    study.correct(wrong[0], wrong[1], reason="decimal point slipped", assistant="Mia")
    return tokens


def main() -> None:
    import uvicorn
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    tmp = Path(tempfile.mkdtemp(prefix="combex-shots-"))
    db = str(tmp / "lab.db")
    tokens = build(db)
    owner = "owner-token-of-the-screenshots"
    app = create_app(db, interval=3.0, owner_token=owner)
    sock = bind_socket("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for f in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
              "--window-size=1100,900", f"--user-data-dir={tmp / 'chrome'}"):
        opts.add_argument(f)
    d = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)

    def shot(name: str, max_height: int = 2600) -> None:
        time.sleep(0.5)
        h = d.execute_script("return document.documentElement.scrollHeight")
        d.set_window_size(1100, min(max(h, 500), max_height))
        time.sleep(0.5)
        d.save_screenshot(str(OUT / name))
        print("wrote", OUT / name)

    try:
        d.get(f"{base}/study/lab/assistant")
        d.find_element(By.ID, "token").send_keys(tokens["Ravi"])
        d.find_element(By.ID, "signin").click()
        d.find_element(By.ID, "ask").click()
        tid = WebDriverWait(d, 30).until(lambda b: b.find_element(By.CSS_SELECTOR, ".ticket")).get_attribute("data-ticket")
        d.find_element(By.ID, f"score-{tid}").send_keys("7.5")
        d.set_window_size(1100, 900)
        shot("web-assistant.png", 900)
        d.find_element(By.CSS_SELECTOR, f"#ticket-{tid} form.enter button").click()
        shot("web-confirm.png", 700)
        d.get(f"{base}/study/lab")
        time.sleep(1.0)
        shot("web-study.png")
        d.find_element(By.ID, "forecast-link").click()
        WebDriverWait(d, 120).until(lambda b: b.find_elements(By.ID, "forecast-lines"))
        d.set_window_size(1100, 900)
        shot("web-forecast.png", 900)
        d.delete_all_cookies()
        d.get(f"{base}/study/lab/assistant")
        d.find_element(By.ID, "token").send_keys(owner)
        d.find_element(By.ID, "signin").click()
        d.set_window_size(1100, 900)
        shot("web-owner.png", 1000)
    finally:
        d.quit()
        server.should_exit = True
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
