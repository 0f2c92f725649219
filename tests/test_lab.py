"""Notebook 06 in a real JupyterLab, driven by Playwright in Debian's Chromium: run all, move the calibration lab's
threshold slider and see the confusion matrix change, save through Lab and find the committed pair unchanged.

The server is the environment's own ``jupyter lab`` with the configuration ``make setup`` installed (the
``pre_save_hook`` of :mod:`evalkit.publish.jupyter_hooks`, the "Python 3" kernelspec), a throwaway user configuration and
runtime folder, a random token, on 127.0.0.1. Chromium is ``/usr/bin/chromium`` (``.ci/run`` installs it);
Playwright's own browser download is never used.
"""
from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
PAIR = [ROOT / "evalkit" / "notebooks" / f"06_calibration.{ext}" for ext in ("ipynb", "py")]
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"headless Chromium not found at {CHROMIUM} "
                                                               "(Debian: apt-get install chromium)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _git_status(paths) -> str:
    return subprocess.run(["git", "status", "--porcelain", "--", *map(str, paths)], cwd=ROOT, capture_output=True,
                          text=True).stdout


def _lab(tmp: Path, root: Path = ROOT):
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg", "JUPYTER_CONFIG_DIR": str(tmp / "config"),
           "JUPYTER_RUNTIME_DIR": str(tmp / "runtime")}
    jupyter = Path(sys.executable).parent / "jupyter"
    proc = subprocess.Popen([str(jupyter), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
                             "--ServerApp.allow_root=True", "--expose-app-in-browser",
                             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
                            cwd=root, env=env, stdout=(tmp / "server.log").open("w"), stderr=subprocess.STDOUT)
    for _ in range(240):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
            return proc, port, token
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError(f"jupyter lab did not start: {(tmp / 'server.log').read_text()[-2000:]}")


def _page(pw):
    browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=[
        "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"])
    return browser.new_page(viewport={"width": 1400, "height": 1000})


def _open(page, port: int, token: str, path: str) -> None:
    """Open ``path`` in Lab and wait until its notebook panel has a session."""
    page.goto(f"http://127.0.0.1:{port}/lab/tree/{path}?token={token}")
    page.wait_for_function("window.jupyterapp !== undefined && window.jupyterapp.shell.currentWidget "
                           "&& window.jupyterapp.shell.currentWidget.sessionContext", timeout=180_000)


def _stop(server) -> None:
    server.terminate()
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        server.kill()


def _wait_for_log(log: Path, line: str, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if line in log.read_text():
            time.sleep(1)  # the pair's second file is written right after the line
            return True
        time.sleep(0.5)
    return False


def _confusion(page) -> str:
    # the widget's text as the page holds it: Lab renders only the cells near the view (windowed notebooks), so a
    # rendered-text read of an output scrolled far away is empty although the widget drew it
    return page.locator(".ek-confusion").first.text_content() or ""


def test_notebook_06_lab_slider_and_clean_save(tmp_path):
    from playwright.sync_api import sync_playwright

    before = {p: p.read_bytes() for p in PAIR}
    clean_in_git = _git_status(PAIR) == ""
    server, port, token = _lab(tmp_path)
    try:
        with sync_playwright() as pw:
            page = _page(pw)
            _open(page, port, token, "notebooks/06_calibration.ipynb")
            # the kernel is started and connected before anything runs (else Lab would ask which kernel)
            status = page.evaluate("async () => { const c = window.jupyterapp.shell.currentWidget.sessionContext; "
                                   "await c.ready; return c.session.kernel.name; }")
            assert status == "python3"
            page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
            page.wait_for_selector(".ek-confusion", timeout=600_000)  # the explore cell ran and drew its widget
            first = _confusion(page)
            assert "TP " in first and "precision" in first
            page.focus(".widget-slider .noUi-handle")
            for _ in range(15):
                page.keyboard.press("ArrowRight")
            # the same reading as _confusion's (textContent: innerText differs from it in whitespace, so comparing the
            # two passed at once and the read below could still see the old matrix), of a drawn matrix, not of the
            # moment the widget clears its output to draw the new one
            page.wait_for_function("(first) => { const e = document.querySelector('.ek-confusion'); "
                                   "return e !== null && e.textContent.includes('flag hallucination') "
                                   "&& e.textContent !== first; }", arg=first,
                                   timeout=60_000)
            moved = _confusion(page)
            assert moved != first and "flag hallucination" in moved
            page.wait_for_function("window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status "
                                   "=== 'idle'", timeout=600_000)
            # not awaited: the command's promise can wait on Lab's dialogs; the server's log says when it saved
            page.evaluate("() => { window.jupyterapp.commands.execute('docmanager:save'); }")
            saved = _wait_for_log(tmp_path / "server.log", "Saving 06_calibration.py", timeout=120)
            page.screenshot(path=str(tmp_path / "lab.png"), timeout=30_000)
        # leaving the block stops the browser and Playwright's driver
        assert saved, "the save never reached the server (see lab.png and server.log in the test's folder)"
        changed = [p.name for p in PAIR if p.read_bytes() != before[p]]
        assert changed == [], f"saving through Lab changed {changed}"
        if clean_in_git:
            assert _git_status(PAIR) == ""
    finally:
        _stop(server)
        for p, data in before.items():  # a failing save must not leave the developer's pair changed
            if p.read_bytes() != data:
                p.write_bytes(data)


DOLLAR_CELLS = [
    # the control: Lab's MathJax runs on this page (else the checks below would pass on a page without it)
    "from IPython.display import HTML, Markdown, display\nfrom evalkit.text.markdown import quote\n"
    "display(Markdown('Control: $x^2 + y^2$'))",
    "display(Markdown('Revenue went ' + quote('from $1.107 billion to $1.2 billion')))",
    "import pandas as pd\npd.set_option('display.html.use_mathjax', False)  # as every evalkit notebook sets it\n"
    "pd.DataFrame({'answer': ['fees from $40 to $45 a month']})",
    "from evalkit.publish.notebook import text_table\n"
    "display(HTML(text_table(pd.DataFrame({'answer': ['from $2.5 million to $3 million']}))))",
]


def test_dollar_amounts_from_the_data_stay_text_in_lab(tmp_path):
    """#42: Lab typeset "from $1.107 billion to $1.2 billion" as italic maths in Markdown outputs and tables. Text
    from the data passes quote() (Markdown), text_table (HTML) or a DataFrame with pandas' MathJax switch off; in a
    real Lab, MathJax typesets the control cell and none of the three."""
    import nbformat
    from playwright.sync_api import sync_playwright

    root = tmp_path / "root"
    root.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in DOLLAR_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "dollars.ipynb")
    server, port, token = _lab(tmp_path, root)
    try:
        with sync_playwright() as pw:
            page = _page(pw)
            _open(page, port, token, "dollars.ipynb")
            page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.sessionContext.ready; }")
            page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
            page.wait_for_selector(".jp-OutputArea-output mjx-container", timeout=300_000)  # the control typeset
            page.wait_for_function("[...document.querySelectorAll('.jp-OutputArea-output')].filter(o => "
                                   "/billion|million|a month/.test(o.textContent)).length === 3", timeout=300_000)
            page.wait_for_timeout(2000)  # MathJax typesets after rendering: give it the time it took for the control
            outputs = page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output')].map(o => "
                                    "({text: o.textContent, maths: o.querySelectorAll('mjx-container').length}))")
            page.screenshot(path=str(tmp_path / "dollars.png"))
        data = [o for o in outputs if any(w in o["text"] for w in ("billion", "million", "a month"))]
        assert len(data) == 3, outputs
        assert [o["maths"] for o in data] == [0, 0, 0], data
        assert "$1.107 billion to $1.2 billion" in data[0]["text"] and "$40 to $45" in data[1]["text"]
        assert "$2.5 million to $3 million" in data[2]["text"]
    finally:
        _stop(server)
