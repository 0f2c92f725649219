"""Real labelled data from ../shared/bench (present in CI): the calibration machinery on it, and the
shortcuts its README warns about, measured."""
import pytest
from sklearn.metrics import roc_auc_score

import evalkit
from evalkit.calibrate import roc_auc

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
