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


def _bench_estimates():
    import importlib
    import sys

    here = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(here))
    try:
        return importlib.import_module("bench_estimates")
    finally:
        sys.path.remove(str(here))


def test_the_best_width_ratio_is_ppi_s_variance_at_its_best_lambda():
    """#39's width target is read against what the population allows: sqrt(1 - rho^2 (N - n) / N), hand-computed."""
    import numpy as np
    import pandas as pd

    bench = _bench_estimates()
    perfect = pd.DataFrame({"s": [0.0, 1.0, 2.0, 3.0], "bad": [0.0, 0.0, 1.0, 1.0]})
    assert bench.best_width_ratio(perfect, "s", 1) == pytest.approx(0.5)  # rho^2 = 1: sqrt(1 - 3/4)
    # isotonic fit 0, .5, .5, 1: cov .125, var(fit) .125, var(y) .25, so rho^2 = .125^2 / (.125 * .25) = .5
    mixed = pd.DataFrame({"s": [0.0, 1.0, 2.0, 3.0], "bad": [0.0, 1.0, 0.0, 1.0]})
    assert bench.best_width_ratio(mixed, "s", 2) == pytest.approx(np.sqrt(1 - 0.5 * 2 / 4))
    falling = pd.DataFrame({"s": [3.0, 2.0, 1.0, 0.0], "bad": [0.0, 1.0, 0.0, 1.0]})
    # a score falling as the label rises is read the other way round (AUC < 0.5): the same bound as `mixed`
    assert bench.best_width_ratio(falling, "s", 2) == pytest.approx(np.sqrt(0.75))
    assert bench.monte_carlo_se(0.95, 500) == pytest.approx(np.sqrt(0.95 * 0.05 / 500))
