"""#29 item 4: faithfulness in one call; context precision's contexts in one call, shared with context recall;
the scores are today's.

``tests/golden/judged_three_contexts.json`` holds the scores (and per-claim and per-context verdicts) the four
RAGAS-style metrics gave on :func:`three_context_rows` against the scripted judge server before the change,
when they made 360 HTTP calls (4.29 a row: 2 for faithfulness, one per context for context precision, one for
context recall; calls about the same question, contexts and reference are asked once for both systems)."""
import json
from pathlib import Path

import pandas as pd

import evalkit
from evalkit.testing import ScriptedJudgeServer

from .three_contexts import three_context_rows

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "judged_three_contexts.json"
METRICS = ["faithfulness", "context_precision", "context_recall", "answer_relevance"]
# the rows' answers that decline (#38): faithfulness and answer relevance leave them undetermined without a call
DECLINING = {"I don't know.", "N/A", "I'm not sure; the context does not say.",
             "There is no information about a river in the sources."}
READ_THE_ANSWER = ("faithfulness", "answer_relevance")


def _details(v):
    return v if isinstance(v, dict) else json.loads(v)


def test_three_contexts_a_row_cost_at_most_3_05_calls_with_todays_scores():
    golden = json.loads(GOLDEN.read_text())
    df = three_context_rows()
    assert all(len(c) == 3 for c in df["contexts"])
    with ScriptedJudgeServer() as srv:
        cfg = {"judge": {"base_url": srv.url, "model": "scripted", "cache_path": None},
               "metric_params": {"answer_relevance": {"method": "rubric"}}}
        out = evalkit.evaluate(df, METRICS, cfg, progress=False)
        calls = srv.requests
    assert out["error"].isna().all()
    assert calls / len(df) <= 3.05 and golden["calls"] / len(df) > 4.2  # 210 calls (2.5 a row), was 360
    declining = df["answer"].isin(DECLINING)
    assert declining.sum() == 4
    assert calls == 210 - 2 * 4  # 210 before #38; the declining rows ask neither faithfulness nor answer relevance
    usage = out.attrs["evalkit"]["judge"]["usage"]
    assert usage["context_precision"]["http_calls"] == df["id"].nunique()  # one per distinct row, not per context
    assert usage["context_recall"].get("http_calls", 0) == 0  # context precision's call answers it
    assert usage["faithfulness"]["http_calls"] == len(df) - 4
    assert {"faithfulness_claims", "context_verdicts"} <= set(out.attrs["evalkit"]["judge"]["prompts"])
    for want, (_, r), declines in zip(golden["rows"], out.iterrows(), declining):
        assert (r["id"], r["system"]) == (want["id"], want["system"])
        for m in METRICS:
            if declines and m in READ_THE_ANSWER:  # scored before #38 (faithfulness 100 for "I don't know.")
                assert pd.isna(r[m]), (r["id"], r["system"], m)
                continue
            assert round(float(r[m]), 6) == want[m], (r["id"], r["system"], m)
        fd, cd = _details(r["faithfulness_details"]), _details(r["context_precision_details"])
        if declines:
            assert fd["abstention"] is True
        else:
            assert [c["verdict"] for c in fd["claims"]] == want["faithfulness_verdicts"], (r["id"], r["system"])
        assert [c["verdict"] for c in cd["verdicts"]] == want["context_verdicts"], (r["id"], r["system"])
        assert round(cd["average_precision_at_k"], 6) == want["average_precision_at_k"]


def test_context_precision_rejects_a_verdict_count_that_is_not_the_context_count():
    from evalkit.judge.client import JudgeError, OpenAIJudge
    from evalkit.base.config import JudgeConfig
    from evalkit.metrics.judged import context_precision
    import pytest

    two = {"verdicts": [{"context": 1, "verdict": 1, "reason": ""}, {"context": 2, "verdict": 0, "reason": ""}],
           "classifications": []}
    with ScriptedJudgeServer(replies=[{"when": "numbered passage", "reply": two}]) as srv:
        j = OpenAIJudge(JudgeConfig(base_url=srv.url, model="m", cache_path=None))
        s = context_precision("Q?", ["a b c.", "d e f."], "a b c.", judge=j)
        assert s.value == 50.0 and s.details["average_precision_at_k"] == 100.0 and srv.requests == 1
        with pytest.raises(JudgeError, match="2 verdicts for 3 contexts"):
            context_precision("Q?", ["a.", "b.", "c."], "a.", judge=j)


def test_every_question_distinct_costs_3_calls_a_row():
    """Rows that share nothing (each system's question and reference its own): one call each for faithfulness,
    the contexts (precision and recall together) and answer relevance."""
    df = three_context_rows()
    df["question"] = df["question"] + " (" + df["system"] + ")"
    df["ground_truth"] = df["ground_truth"] + " (" + df["system"] + ")"
    with ScriptedJudgeServer() as srv:
        cfg = {"judge": {"base_url": srv.url, "model": "scripted", "cache_path": None},
               "metric_params": {"answer_relevance": {"method": "rubric"}}}
        out = evalkit.evaluate(df, METRICS, cfg, progress=False)
        # less the 4 declining rows' faithfulness and answer relevance calls (#38)
        assert out["error"].isna().all() and srv.requests == 3 * len(df) - 2 * len(DECLINING)
