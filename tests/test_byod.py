"""Bring your own data: `evalkit init` and `evalkit report` from a non-editable install, in an empty folder,
on datasets written here (ragas column names, no sample columns)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
# the default (evalkit) profile's four checks, so the verdict is given, and a few cheap seed and reference metrics
FAST = ["unsupported_facts", "reference_conflict", "answers_question", "question_coverage", "relevance",
        "completeness", "hallucination", "exact_match", "keyword_coverage", "number_match"]

ROWS = [  # a bridge, a clinic and a ferry: nothing from the bundled sample
    ("What year did the Harlow bridge open?", "The Harlow bridge opened to traffic in 1932 after four years of work.",
     "The Harlow bridge opened in 1932.", "It opened in 1932."),
    ("How long is the Harlow bridge?", "The bridge spans 412 metres across the Wend estuary.",
     "It is about 500 metres long.", "412 metres"),
    ("Who designed the Harlow bridge?", "The design was by engineer Mara Quist, who also built the Selby viaduct.",
     "I don't know; the documents do not say who designed it.", "Mara Quist"),
    ("What river does the bridge cross?", "The bridge spans 412 metres across the Wend estuary.",
     "It crosses the Wend estuary.", "The Wend estuary"),
    ("When was the bridge repainted?", "It was last repainted in 2019 at a cost of 2.3 million pounds.",
     "It was repainted in 2019 for about 2.3 million pounds.", "2019"),
    ("How many beds does the Oakfield clinic have?", "The Oakfield clinic has 48 beds and two operating theatres.",
     "The clinic has 84 beds.", "48 beds"),
    ("When does the Tarn ferry run?", "The Tarn ferry runs hourly from 6am to 10pm, every day except Christmas.",
     "The ferry runs hourly from 6am to 10pm.", "Hourly, 6am to 10pm"),
    ("What does a ferry ticket cost?", "A single ferry ticket costs 4.50 pounds; a return costs 8 pounds.",
     "A single ticket costs 4.50 pounds.", "4.50 pounds single, 8 pounds return"),
]


def _ragas_frame() -> pd.DataFrame:
    return pd.DataFrame({"user_input": [r[0] for r in ROWS], "retrieved_contexts": [json.dumps([r[1]]) for r in ROWS],
                         "response": [r[2] for r in ROWS], "reference": [r[3] for r in ROWS]})


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """evalkit built as a wheel and installed (not editable) into a folder of its own; the venv supplies
    the dependencies. Commands run with this folder first on PYTHONPATH, from a folder outside the repo."""
    import shutil

    base = tmp_path_factory.mktemp("wheel")
    # built from a copy of what the wheel is made of: setuptools writes build/ and *.egg-info into the folder it
    # builds, and two test processes building the checkout at once broke each other's build
    src = base / "src"
    shutil.copytree(ROOT / "evalkit", src / "evalkit", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                            str(base / "dist"), str(src)], check=True, capture_output=True, text=True)
    # the package's metadata is current: no deprecation from the build backend (a TOML-table licence was one)
    assert "BuildBackendWarning" not in built.stderr and "Deprecat" not in built.stderr, built.stderr[-1500:]
    wheel = next((base / "dist").glob("evalkit-*.whl"))
    site = base / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, text=True)
    env = {**os.environ, "PYTHONPATH": str(site), "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg"}
    return env


def _evalkit(args, cwd, env, check=True):
    r = subprocess.run([sys.executable, "-m", "evalkit.cli", *args], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=900)
    if check and r.returncode != 0:
        raise AssertionError(f"evalkit {' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r


def test_installed_copy_is_the_one_used(installed, tmp_path):
    r = subprocess.run([sys.executable, "-c", "import evalkit, evalkit.publish.experiment as e; print(evalkit.__file__); "
                                              "print(sorted(p.name for p in e.NOTEBOOK_DIR.glob('*.ipynb'))[0])"],
                       cwd=tmp_path, env=installed, capture_output=True, text=True, check=True)
    where, first_nb = r.stdout.split()
    assert where.startswith(installed["PYTHONPATH"]) and first_nb == "00_quickstart.ipynb"


def _report(tmp_path, env, data_name, frame, extra_yaml=""):
    (tmp_path / "data").mkdir()
    data = tmp_path / "data" / data_name
    frame.to_csv(data, index=False) if data_name.endswith(".csv") else frame.to_json(data, orient="records", lines=True)
    exp_dir = tmp_path / "exp"
    exp_dir.mkdir()
    _evalkit(["init", str(data), "-o", str(exp_dir / "my.yaml")], tmp_path, env)
    text = (exp_dir / "my.yaml").read_text()
    text = text.replace("metrics: null", f"metrics: {json.dumps(FAST)}") + extra_yaml
    (exp_dir / "my.yaml").write_text(text)
    run_dir = tmp_path / "elsewhere"  # neither the data's nor the experiment's folder
    run_dir.mkdir()
    r = _evalkit(["report", str(exp_dir / "my.yaml"), "--resamples", "50"], run_dir, env)
    out = run_dir / "reports" / text.split("name: ")[1].split("\n")[0]
    return text, r, out, json.loads((out / "metrics.json").read_text()), (out / "report.html").read_text()


def test_report_on_the_four_ragas_columns(installed, tmp_path):
    text, r, out, m, html = _report(tmp_path, installed, "answers.csv", _ragas_frame())
    assert "data: ../data/answers.csv" in text  # written relative to the experiment file
    assert "# calibration: no binary label column" in text and "# compare: no 'system' column" in text
    assert m["rows"] == len(ROWS) and m["systems"] == []
    assert not m["sections"]["calibration"]["applies"] and not m["sections"]["comparison"]["applies"]
    assert {s["notebook"] for s in m["skipped_notebooks"]} == {"05_judged_metrics", "06_calibration",
                                                               "07_compare_systems", "09_summary_scorers"}
    # by hand: the abstention is its own outcome; the invented 500 metres (the context says 412) and the 84 beds
    # (48) are unsupported facts; a single fare for a question the reference answers with two fares is partial
    res = pd.read_parquet(out / "results.parquet")
    assert res["verdict"].tolist() == ["PASS", "FAIL", "ABSTAIN", "PASS", "PASS", "FAIL", "PASS", "WARN"]
    assert res.loc[1, "verdict_rule"].startswith("unsupported_facts")
    assert res.loc[7, "verdict_rule"].startswith("question_coverage")
    assert "Sections not shown for this data" in html
    assert "no &#x27;system&#x27; column" in html or "no 'system' column" in html
    assert "Traceback" not in html and "KeyError" not in html


def test_report_with_systems_and_no_labels(installed, tmp_path):
    a, b = _ragas_frame(), _ragas_frame()
    b["response"] = [r[3] for r in ROWS]  # system b answers with the reference text
    frame = pd.concat([a.assign(system="base"), b.assign(system="tuned")], ignore_index=True)
    frame.insert(0, "qid", [f"k{i}" for i in range(len(ROWS))] * 2)
    frame = frame.rename(columns={"qid": "id"})
    text, r, out, m, html = _report(tmp_path, installed, "two.jsonl", frame)
    assert "systems: [base, tuned]" in text and "pair_on: id" in text
    assert m["systems"] == ["base", "tuned"] and m["sections"]["comparison"]["applies"]
    cmp = m["comparison"]
    assert cmp["system_a"] == "base" and cmp["pair_on"] == "id"
    em = next(row for row in cmp["table"] if row["metric"] == "exact_match")
    assert em["n_pairs"] == len(ROWS) and em["small"] is True  # 8 pairs < 10: flagged, not a finding
    # tuned answers ARE the references: exact match 1.0 on all 8; base matches none of them exactly
    assert em["mean_b"] == 1.0 and em["mean_a"] == 0.0 and em["diff"] == 1.0
    assert not m["sections"]["calibration"]["applies"]
    assert "System comparison" in html and "tuned</strong> minus <strong>base" in html


def test_report_with_labels_and_one_system(installed, tmp_path):
    # the eight rows three times over (a re-run of the same questions): 6 hallucinated of 24, since calibration
    # refuses fewer than 5 labels of a class
    frame = pd.concat([_ragas_frame()] * 3, ignore_index=True)
    frame["hallucinated"] = [False, True, False, False, False, True, False, False] * 3
    frame["system"] = "only-one"
    text, r, out, m, html = _report(tmp_path, installed, "labelled.csv", frame)
    assert "label: hallucinated" in text and "# compare: one system only" in text
    cal = m["calibration"]
    assert m["sections"]["calibration"]["applies"] and "error" not in cal
    assert cal["n_used"] + cal["excluded_undetermined"] == 3 * len(ROWS)
    assert "seeded split" in cal["protocol"]  # the starter asks for the honest protocol, and the page says it
    assert cal["protocol"] in html or cal["protocol"].replace("%", "") in html
    assert not m["sections"]["comparison"]["applies"] and "one system only" in html
