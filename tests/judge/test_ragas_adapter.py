"""ragas' own metrics (ragas 0.4.3, the `ragas` extra) through the adapter, pointed at the loopback server."""
import pandas as pd
import pytest

import evalkit

pytest.importorskip("ragas")


@pytest.fixture(scope="module")
def ragas_results(judge_server, sample_df):
    cfg = {"judge": {"base_url": judge_server.url, "model": "scripted", "cache_path": None}}
    df = sample_df.head(10).copy()
    df.loc[9, "answer"] = ""  # ragas refuses an empty response: a recorded row error, not a silent NaN
    return evalkit.evaluate(df, ["ragas_faithfulness", "ragas_context_precision", "ragas_context_recall",
                                 "faithfulness", "context_recall"], cfg, progress=False)


def test_ragas_numbers_agree_with_evalkit_on_the_same_labels(ragas_results):
    r = ragas_results.iloc[:9]
    # the scripted server labels ragas' and evalkit's prompts with the same rules, so the two
    # implementations' arithmetic must agree
    assert (r["ragas_faithfulness"].astype(float) * 100).tolist() == r["faithfulness"].astype(float).tolist()
    assert (r["ragas_context_recall"].astype(float) * 100).tolist() == r["context_recall"].astype(float).tolist()
    assert r["ragas_context_precision"].between(0, 1).all()


def test_ragas_row_error_is_recorded(ragas_results):
    last = ragas_results.iloc[9]
    assert pd.isna(last["ragas_faithfulness"]) and "ragas_faithfulness: ValueError" in last["error"]
    assert ragas_results.iloc[:9]["error"].isna().all()
