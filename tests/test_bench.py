"""Real labelled data from ../shared/bench (present in CI): the calibration machinery on it, and the
shortcuts its README warns about, measured."""
from pathlib import Path

import pytest
from sklearn.metrics import roc_auc_score

import evalkit
from evalkit.decide.calibrate import roc_auc

from .conftest import BENCH

pytestmark = pytest.mark.skipif(not BENCH.exists(), reason="../shared/bench not present")


@pytest.fixture(scope="module")
def summedits():
    df = evalkit.load(BENCH / "summedits_dev.jsonl")
    return evalkit.evaluate(df, ["novel_token_rate", "answer_length"], progress=False)


def test_summedits_loads_every_row(summedits):
    assert len(summedits) == 986 and int(summedits["hallucinated"].sum()) == 617
    assert summedits["error"].isna().all()


def test_summedits_trivial_baselines_near_chance(summedits):
    y = summedits["hallucinated"].astype(bool)
    groups = summedits["contexts"].map(lambda c: c[0][:200])
    for m in ("novel_token_rate", "answer_length"):
        iv = roc_auc(summedits[m].astype(float), y, n_resamples=200, seed=0, groups=groups)
        assert iv.estimate == pytest.approx(roc_auc_score(y, summedits[m].astype(float)), abs=1e-12)
        assert abs(iv.estimate - 0.5) < 0.1 and iv.low < 0.5 < iv.high  # README: near chance


def test_halueval_qa_length_shortcut():
    df = evalkit.load(BENCH / "halueval_qa_dev.jsonl").head(600)
    res = evalkit.evaluate(df, ["answer_length"], progress=False)
    iv = roc_auc(res["answer_length"].astype(float), res["hallucinated"].astype(bool), n_resamples=100,
                 groups=res["item_id"].tolist())
    assert iv.estimate > 0.9  # README: length alone separates the classes in QA


def test_active_labels_benchmark_runs_and_writes_its_table(tmp_path):
    """benchmarks/bench_active_labels.py at a small size (2 seeds, two budgets): the same code path as the README's
    run, its table and verdict line written from the numbers."""
    import subprocess
    import sys

    out = tmp_path / "active.md"
    r = subprocess.run([sys.executable, "benchmarks/bench_active_labels.py", "--seeds", "2", "--budgets", "40,80",
                        "--resamples", "30", "--out", str(out)], cwd=Path(__file__).resolve().parents[1],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    text = out.read_text()
    assert "## halueval_qa" in text and "## halueval_summarization" in text and "**Target (at most 60%" in text
    assert (tmp_path / "active_labels_halueval_qa.png").exists()
