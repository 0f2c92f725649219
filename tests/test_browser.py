"""The report and the evidence view, rendered in a real browser: no sideways scrolling at 1280 px, every image loaded.

Headless Chromium (Debian's ``chromium`` package at /usr/bin/chromium; the tests skip with the reason when it is
absent) opens a copy of the page with a ``<base>`` pointing at the original folder (so relative image paths
resolve as they do for a reader) and a small script that, after the ``load`` event, writes into the DOM the
page's ``scrollWidth``, the viewport's width, each image's ``naturalWidth`` and the outermost elements that
reach past the right edge; ``--dump-dom`` prints that DOM. :func:`check_page` is reusable:
``python -c "from tests.test_browser import check_page; print(check_page('reports/default/report.html'))"``.

The checker itself is tested first on pages built to fail (a 2000 px wide block, a missing image), so a checker
that measured nothing could not pass.
"""
from __future__ import annotations

import base64
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
WIDTH, HEIGHT = 1280, 900
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--window-size={WIDTH},{HEIGHT}")
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"headless Chromium not found at {CHROMIUM} "
                                                                  "(Debian: apt-get install chromium)")

# Runs after load: measurements as JSON in <pre id="ek-measure">. An element "overflows" when its right edge passes
# the viewport's content width; only the outermost such elements are listed (their children overflow with them),
# and not those clipped inside a box that fits (that box is listed under scrolling_boxes).
MEASURE = """<script>
window.addEventListener('load', function () {
  var doc = document.documentElement, W = doc.clientWidth;
  function name(el) {
    return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      (typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
  }
  function section(el) {
    var hs = document.querySelectorAll('h1,h2,h3'), last = '';
    for (var i = 0; i < hs.length; i++) {
      if (hs[i].compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) last = hs[i].textContent.trim();
    }
    return last.slice(0, 80);
  }
  var wide = [];
  document.querySelectorAll('body *').forEach(function (el) {
    var r = el.getBoundingClientRect(), p = el.parentElement;
    if (el.id === 'ek-measure' || r.width === 0 || r.right <= W + 0.5) return;
    if (p && p !== document.body && p.getBoundingClientRect().right > W + 0.5) return;
    for (var c = p; c && c !== document.body; c = c.parentElement) {  // clipped by a box that fits: see boxes
      if (getComputedStyle(c).overflowX !== 'visible' && c.getBoundingClientRect().right <= W + 0.5) return;
    }
    var path = [], a = el;
    while (a && a !== document.body) { path.unshift(name(a)); a = a.parentElement; }
    wide.push({element: name(el), path: path.join(' > '), right: Math.round(r.right), width: Math.round(r.width),
               section: section(el), text: (el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 80)});
  });
  // boxes that scroll or clip sideways inside the page (a wide table in an overflow:auto wrapper): the page
  // itself does not scroll, but the reader still cannot see the last columns without scrolling that box
  var boxes = [];
  document.querySelectorAll('body *').forEach(function (el) {
    var ox = getComputedStyle(el).overflowX;
    if (el.scrollWidth > el.clientWidth + 1 && (ox === 'auto' || ox === 'scroll' || ox === 'hidden')) {
      boxes.push({element: name(el), section: section(el), scrollWidth: el.scrollWidth, clientWidth: el.clientWidth,
                  text: (el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 80)});
    }
  });
  // a name set in one word (a metric, a column: letters, digits, underscores) drawn on more than one line
  var broken = [];
  document.querySelectorAll('td, th, code').forEach(function (el) {
    var t = (el.textContent || '').trim();
    if (!/^[a-z][a-z0-9_]{5,}$/.test(t) || el.children.length) return;
    var range = document.createRange();
    range.selectNodeContents(el);
    var tops = {};
    Array.prototype.forEach.call(range.getClientRects(), function (r) { if (r.width > 0) tops[Math.round(r.top)] = 1; });
    if (Object.keys(tops).length > 1) broken.push({text: t, section: section(el)});
  });
  var imgs = Array.prototype.map.call(document.images, function (im) {
    return {src: (im.getAttribute('src') || '').slice(0, 80), alt: im.getAttribute('alt'),
            complete: im.complete, naturalWidth: im.naturalWidth};
  });
  var out = document.createElement('pre');
  out.id = 'ek-measure';
  out.textContent = JSON.stringify({scrollWidth: doc.scrollWidth, clientWidth: W, innerWidth: window.innerWidth,
                                    images: imgs, overflowing: wide, scrolling_boxes: boxes, broken_names: broken,
                                    visible_text: document.body.innerText, all_text: document.body.textContent});
  document.body.appendChild(out);
});
</script>"""


def _instrumented(page: Path) -> str:
    """The page's HTML with a <base> at its own folder (relative links resolve as for a reader) and MEASURE."""
    text = page.read_text(encoding="utf-8")
    base = f'<base href="{html.escape(page.resolve().parent.as_uri())}/">'
    head = re.search(r"<head[^>]*>", text, re.IGNORECASE)
    text = text[:head.end()] + base + text[head.end():] if head else base + text
    end = text.lower().rfind("</body>")
    return text[:end] + MEASURE + text[end:] if end >= 0 else text + MEASURE


def chromium(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run headless Chromium with a throwaway profile; raises with its stderr when it fails."""
    with tempfile.TemporaryDirectory(prefix="ek-chromium-") as profile:
        proc = subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"chromium {' '.join(args)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return proc


def check_page(html_path: str | Path, width: int = WIDTH) -> dict:
    """Open ``html_path`` in headless Chromium at ``width`` x 900 and measure it after load.

    Returns a dict: ``scrollWidth``, ``clientWidth``, ``innerWidth``, ``overflow`` (scrollWidth > clientWidth:
    the page scrolls sideways), ``overflowing`` (outermost elements past the right edge: element, path from
    body, right edge and width in px, the heading above it, its text's start), ``images`` (src, alt,
    complete, naturalWidth), ``broken_images`` (those with naturalWidth 0), ``visible_text`` (what a reader
    sees: closed ``<details>`` left out) and ``all_text`` (every text node of the page).
    """
    page = Path(html_path)
    with tempfile.TemporaryDirectory(prefix="ek-page-") as tmp:
        probe = Path(tmp) / "page.html"
        probe.write_text(_instrumented(page), encoding="utf-8")
        dom = chromium(f"--window-size={width},{HEIGHT}", "--virtual-time-budget=10000", "--dump-dom",
                       probe.as_uri()).stdout
    found = re.search(r'<pre id="ek-measure">(.*?)</pre>', dom, re.DOTALL)
    if not found:
        raise RuntimeError(f"{page}: the measuring script wrote nothing (a script error, or the page never "
                           f"finished loading); DOM starts: {dom[:300]!r}")
    m = json.loads(html.unescape(found.group(1)))
    m["overflow"] = m["scrollWidth"] > m["clientWidth"]
    m["broken_images"] = [im for im in m["images"] if not im["naturalWidth"]]
    return m


def screenshot(html_path: str | Path, png: str | Path, *, height: int = HEIGHT, width: int = WIDTH) -> Path:
    """The top ``height`` px of a page at ``width`` px wide as a PNG (Chromium's ``--screenshot``)."""
    png = Path(png).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    chromium(f"--window-size={width},{height}", f"--screenshot={png}", "--hide-scrollbars",
             Path(html_path).resolve().as_uri())
    return png


def _png(width: int, height: int) -> bytes:
    """A valid grey PNG written by hand (zlib + CRCs), so the checker's image test depends on no plotting code."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")
    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])
    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def _page(body: str) -> str:
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title></head><body>{body}</body></html>"


# ---------------------------------------------------------------------------------------------------------
# the checker, on pages built to pass and to fail
@needs_chromium
def test_check_page_sees_overflow_and_broken_images(tmp_path):
    (tmp_path / "ok.png").write_bytes(_png(7, 5))
    page = tmp_path / "bad.html"
    page.write_text(_page("<h2>Wide part</h2><div id='wide' style='width:2000px'>x</div>"
                          "<img src='ok.png' alt='fine'><img src='missing.png' alt='gone'>"
                          "<div id='box' style='overflow-x:auto'><table><tr><td style='min-width:3000px'>cut</td>"
                          "</tr></table></div>"), encoding="utf-8")
    m = check_page(page)
    assert m["overflow"] and m["scrollWidth"] >= 2000
    assert m["clientWidth"] <= WIDTH
    assert [o["element"] for o in m["overflowing"]] == ["div#wide"]
    assert m["overflowing"][0]["section"] == "Wide part"
    # the table scrolls inside its box: the page does not move, but its last column is out of sight
    assert [(b["element"], b["scrollWidth"] >= 3000) for b in m["scrolling_boxes"]] == [("div#box", True)]
    by_src = {im["src"]: im for im in m["images"]}
    assert by_src["ok.png"]["naturalWidth"] == 7  # the relative path resolved against the page's own folder
    assert [im["src"] for im in m["broken_images"]] == ["missing.png"]


@needs_chromium
def test_check_page_sees_a_metric_name_broken_across_lines(tmp_path):
    """The report page's old rule (overflow-wrap:anywhere) let a table column shrink until "completeness" split;
    the page's rule now (break-word) keeps it whole and the table scrolls instead."""
    from evalkit.publish.report import PAGE_CSS

    row = "<tr><td>completeness</td>" + "<td>" + "a long sentence of words " * 30 + "</td></tr>"
    for css, broken in (("td{overflow-wrap:anywhere}", True), (PAGE_CSS, False)):
        page = tmp_path / "names.html"
        page.write_text(_page(f"<style>{css}</style><div class='jp-RenderedHTMLCommon'><table style='width:100%'>"
                              f"{row}</table></div>"), encoding="utf-8")
        m = check_page(page, 800)
        assert bool(m["broken_names"]) is broken, (css[:40], m["broken_names"])


@needs_chromium
def test_check_page_passes_a_narrow_page(tmp_path):
    page = tmp_path / "ok.html"
    src = "data:image/png;base64," + base64.b64encode(_png(3, 2)).decode()
    page.write_text(_page(f"<p>{'word ' * 400}</p><img src='{src}' alt='a'>"), encoding="utf-8")
    m = check_page(page)
    assert not m["overflow"] and m["overflowing"] == [] and m["scrolling_boxes"] == [] and m["broken_images"] == []
    assert m["images"][0]["naturalWidth"] == 3


# ---------------------------------------------------------------------------------------------------------
# (a) the evidence view
def _evidence_frame() -> pd.DataFrame:
    """A hand-written scored row whose answer has a long unbreakable token, markup and an unsupported number."""
    long_token = "https://example.org/" + "a" * 300
    answer = f"The premium is $640 <script>alert(1)</script> & see {long_token}"
    anchors = [{"type": "number", "text": "$640", "supported": False, "evidence": None}]
    return pd.DataFrame({
        "id": ["r1"], "question": ["What is the premium?"], "answer": [answer],
        "contexts": [["The base premium is $604 per year. " + "b" * 400]],
        "hallucination": [1.0], "hallucination_details": [json.dumps({"anchors": anchors, "unsupported": ["$640"]})],
        "relevance": [0.5], "relevance_details": ['{"cosine": 0.5, "jaccard": 0.5}'],
        "completeness": [1.0], "completeness_details": ['{"missing": [], "matched": 2}'],
        "verdict": ["FAIL"], "verdict_rule": ["hallucination 1.000 > 0.5"]})


@needs_chromium
def test_evidence_view_fits_1280(tmp_path):
    from evalkit.publish.view.show import show

    page = tmp_path / "evidence.html"
    page.write_text(show(_evidence_frame(), "r1").to_page(), encoding="utf-8")
    m = check_page(page)
    assert not m["overflow"] and not m["scrolling_boxes"], (m["overflowing"], m["scrolling_boxes"])
    assert m["images"] == []  # the view is text and CSS only
    assert "<script>alert" not in page.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------------------
# (b) the default report and (c) a report on data without labels
def _report(experiment: Path, out: Path) -> Path:
    """``evalkit report`` as a user runs it (a real subprocess), from a scratch folder so no figures/ copy lands
    in the repository; 50 resamples (the layout does not depend on them)."""
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "evalkit.cli", "report", str(experiment), "--out", str(out),
                           "--resamples", "50"], cwd=out, capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    pages = sorted(out.glob("*/report.html"))
    assert len(pages) == 1, f"expected one report.html under {out}, found {pages}; stderr: {proc.stderr[-1000:]}"
    return pages[0]


def _unlabelled_experiment(folder: Path) -> Path:
    """Six rows in ragas' column names (question, contexts, answer, ground_truth): no system, no labels;
    the experiment is what ``evalkit init`` writes for it."""
    rows = [
        ("What is the base premium for Territory 118?", ["The base premium for Territory 118 is $604 per year."],
         "The base premium is $604 per year.", "$604 per year."),
        ("When did the 2023 manual take effect?", ["The manual took effect on March 1, 2023."],
         "It took effect on March 1, 2024.", "March 1, 2023."),
        ("Which homes require an inspection?", ["Rule C-5 requires an inspection for homes built before 1950."],
         "Homes built before 1950 require an inspection.", "Homes built before 1950 (Rule C-5)."),
        ("What is the maximum total discount?", ["Rule C-4 caps the total discount at 25%."],
         "I don't know.", "25% (Rule C-4)."),
        ("Which ZIP codes does Territory 118 cover?", ["Territory 118 covers ZIP codes 60614 and 60657."],
         "Territory 118 covers 60614, 60657 and 60610.", "60614 and 60657."),
        ("Who publishes the manual?", ["Northfield Mutual publishes the homeowners rate manual."],
         "Northfield Mutual publishes it.", "Northfield Mutual."),
    ]
    data = folder / "unlabelled.jsonl"
    data.write_text("".join(json.dumps(dict(zip(("question", "contexts", "answer", "ground_truth"), r))) + "\n"
                            for r in rows), encoding="utf-8")
    exp = folder / "unlabelled.yaml"
    proc = subprocess.run([sys.executable, "-m", "evalkit.cli", "init", str(data), "-o", str(exp)], cwd=folder,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return exp


def _overflow_reason(m: dict) -> str:
    culprits = "; ".join(f"{o['path']} (right edge {o['right']} px, under '{o['section']}')"
                         for o in m["overflowing"][:3])
    boxes = "; ".join(f"{b['element']} scrolls {b['scrollWidth']} px in {b['clientWidth']} px under '{b['section']}'"
                      for b in m["scrolling_boxes"][:3])
    return f"page scrollWidth {m['scrollWidth']} (viewport {m['clientWidth']}): {culprits or 'no element past the edge'}" \
           f"; boxes scrolling sideways: {boxes or 'none'}"


@needs_chromium
def test_unlabelled_report_reads_at_800_and_1280_and_images_load(tmp_path):
    page = _report(_unlabelled_experiment(tmp_path), tmp_path / "reports")
    for width in (800, 1280):
        m = _assert_reads_at(page, width)
        assert m["images"] and m["broken_images"] == [], m["images"]

# ---------------------------------------------------------------------------------------------------------
# (d) the page at a laptop's 800 px and a desktop's 1280 px: the default report, and a report on data with a
# 3,000-word answer and a long system name
LONG_SYSTEM = "retrieval-augmented-generator-with-cross-encoder-reranker-top-8-chunks-of-512-tokens-v2.3.1-final"
_LAST_WORDS = "and this closing sentence of the very long answer appears nowhere else."


def _long_answer_experiment(folder: Path) -> Path:
    """Eight rows in ragas' column names plus ``system`` (two systems, one with a 100-character name) and an id;
    one answer is 3,000 words long. The experiment is what ``evalkit init`` writes for it."""
    words = " ".join(f"The premium for territory {i % 97} rose by {i % 13} percent in {1990 + i % 30}." for i in
                     range(375))  # 375 sentences of 8 words
    long_answer = f"{words} {_LAST_WORDS}"
    assert len(long_answer.split()) >= 3000
    qa = [("What is the base premium for Territory 118?", "The base premium for Territory 118 is $604 per year."),
          ("When did the 2023 manual take effect?", "The manual took effect on March 1, 2023."),
          ("Which homes require an inspection?", "Rule C-5 requires an inspection for homes built before 1950."),
          ("What is the maximum total discount?", "Rule C-4 caps the total discount at 25%.")]
    rows = []
    for k, (q, ctx) in enumerate(qa):
        rows.append({"id": f"q{k}-a", "system": "baseline", "question": q, "contexts": [ctx], "answer": ctx,
                     "ground_truth": ctx})
        rows.append({"id": f"q{k}-b", "system": LONG_SYSTEM, "question": q, "contexts": [ctx],
                     "answer": long_answer if k == 0 else "It is 7,000 dollars since 1820.", "ground_truth": ctx})
    data = folder / "long.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    exp = folder / "long.yaml"
    proc = subprocess.run([sys.executable, "-m", "evalkit.cli", "init", str(data), "-o", str(exp)], cwd=folder,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return exp


def _assert_reads_at(page: Path, width: int) -> dict:
    m = check_page(page, width)
    assert not m["overflow"] and m["overflowing"] == [], _overflow_reason(m)
    # a wide table may scroll inside its own box (its first column stays put); nothing else may
    assert all(b["element"].startswith(("table", "div.ek-table", "div.evalkit-text")) for b in m["scrolling_boxes"]), \
        _overflow_reason(m)
    literal = re.findall(r"(?<![\w.])(None|nan|NaN)(?![\w.])", m["visible_text"])
    assert not literal, f"literal {literal[:3]} on the page at {width} px"
    return m


@needs_chromium
def test_default_report_reads_at_800_and_1280_and_images_load(tmp_path):
    page = _report(ROOT / "experiments" / "default.yaml", tmp_path / "reports")
    for width in (800, 1280):
        m = _assert_reads_at(page, width)
        assert m["images"] and m["broken_images"] == [], m["images"]  # the report shows figures, each loaded
        assert m["all_text"].count("evalkit:") == 1  # the signature, once
        assert m["broken_names"] == [], m["broken_names"][:5]  # no metric name split across lines ("completene|ss")


@needs_chromium
def test_long_answer_report_reads_at_800_and_1280(tmp_path):
    page = _report(_long_answer_experiment(tmp_path), tmp_path / "reports")
    for width in (800, 1280):
        m = _assert_reads_at(page, width)
        assert LONG_SYSTEM in m["visible_text"]
        # the whole answer is on the page once (folded), and its closing clause once more: the evalkit verdict
        # FAILs the answer on that unsupported clause, and the failed answer's evidence names it
        assert m["all_text"].count(_LAST_WORDS) == 2
        # ... folded: its start shows, the rest behind a toggle, so the reader sees the clause once, as evidence
        assert m["visible_text"].count(_LAST_WORDS) == 1
        assert f"clause '{_LAST_WORDS}': not in the contexts" in m["visible_text"]
        assert "words: show all" in m["visible_text"] or "full text above" in m["visible_text"]
