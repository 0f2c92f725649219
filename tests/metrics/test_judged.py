import json

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.metrics.judged import (answer_class, answer_relevance, compute_answer_relevance, compute_context_precision,
                                    compute_context_recall, compute_factual_accuracy, compute_faithfulness,
                                    compute_ragas_score, context_precision, context_recall, factual_accuracy,
                                    faithfulness, grade, ragas_score)

CTX = ["The base premium for Territory 118 is $604 per year. Territory 205 pays $512."]


def test_pure_formulas():
    assert compute_faithfulness([1, 1, 0, 1]) == 75.0 and compute_faithfulness([]) == 100.0
    assert compute_context_precision([0, 1]) == (50.0, 50.0)  # AP = (1/2) / 1
    assert compute_context_precision([]) == (0.0, 0.0)
    assert compute_context_recall([1, 0]) == 50.0 and compute_context_recall([]) == 100.0
    assert compute_factual_accuracy({"correctness": 10, "completeness": 10, "consistency": 10}) == (100.0, "A")
    assert [grade(x) for x in (80, 79.9, 60, 40, 20, 19.9)] == ["A", "B", "B", "C", "D", "E"]
    q = np.array([1.0, 0.0])
    assert compute_answer_relevance(q, np.array([[1.0, 0.0], [0.0, 1.0]]), 0) == 50.0
    assert compute_answer_relevance(q, np.array([[1.0, 0.0]]), 1) == 0.0
    assert compute_answer_relevance(q, np.array([[-1.0, 0.0]]), 0) == 0.0  # clipped at 0


@pytest.mark.parametrize("comps,expected", [
    ({"faithfulness": 100, "context_precision": 50, "context_recall": 50, "answer_relevance": 100}, 80.0),
    ({"faithfulness": 100, "context_precision": None, "context_recall": 50, "answer_relevance": None}, 80.0),
    ({"faithfulness": None, "context_precision": float("nan"), "context_recall": None, "answer_relevance": 40}, 40.0),
    ({"faithfulness": None, "context_precision": None, "context_recall": None, "answer_relevance": None}, None),
])
def test_ragas_score_renormalises(comps, expected):
    assert compute_ragas_score(comps) == (pytest.approx(expected) if expected is not None else None)
    s = ragas_score(**comps)
    assert s.value == (pytest.approx(expected) if expected is not None else None)
    assert list(s.details["used"]) == sorted(k for k, v in comps.items() if v is not None and v == v)


def test_faithfulness_with_scripted_judge(scripted_judge):
    # statements: "The base premium for Territory 118 is $604." (supported), "Territory 205 pays $700." (not)
    s = faithfulness("What are the premiums?", "The base premium for Territory 118 is $604. Territory 205 pays $700.",
                     CTX, judge=scripted_judge)
    assert s.value == 50.0 and [c["verdict"] for c in s.details["claims"]] == [1, 0]
    # issue 38: an answer that declines asserts nothing; it was scored 100 and raised a system's mean. Now it is
    # undetermined (the verdict counts it apart, ABSTAIN), without asking the judge
    calls = scripted_judge.usage().get("faithfulness", {}).get("http_calls", 0)
    declined = faithfulness("Q", "I don't know.", CTX, judge=scripted_judge)
    assert declined.value is None and declined.details["abstention"] is True
    assert scripted_judge.usage().get("faithfulness", {}).get("http_calls", 0) == calls
    assert answer_relevance("Q", "I don't know.", judge=scripted_judge).value is None
    assert factual_accuracy("Q", "The documents do not say.", "$604", judge=scripted_judge).value is None
    assert faithfulness("Q", "Territory 205 pays $512.", [], judge=scripted_judge).value == 0.0


def test_context_precision_and_recall(scripted_judge):
    s = context_precision("What is the premium?", ["Unrelated text about apples.", CTX[0]],
                          "The base premium for Territory 118 is $604.", judge=scripted_judge)
    assert [v["verdict"] for v in s.details["verdicts"]] == [0, 1]
    assert s.value == 50.0 and s.details["average_precision_at_k"] == 50.0
    r = context_recall("Q", CTX, "The base premium for Territory 118 is $604. Territory 311 pays $438.",
                       judge=scripted_judge)
    assert r.value == 50.0 and r.details["total"] == 2
    assert context_recall("Q", CTX, None, judge=scripted_judge).value is None
    assert context_recall("Q", [], "x y z.", judge=scripted_judge).value == 0.0


def test_answer_relevance_methods(scripted_judge, encoder):
    q = "What is the base premium for Territory 118?"
    a = "The base premium for Territory 118 is $604 per year."
    emb = answer_relevance(q, a, judge=scripted_judge, encoder=encoder, method="embedding")
    assert emb.details["method"] == "embedding" and len(emb.details["questions"]) == 3
    vecs = encoder.encode([q, *emb.details["questions"]])
    assert emb.value == pytest.approx(100 * float(np.mean(vecs[1:] @ vecs[0])), rel=1e-6)  # all cosines > 0 here
    # the scripted rubric: shared content words / the question's {base, premium, territory, 118}
    assert answer_relevance(q, a, judge=scripted_judge, method="rubric").value == 100.0
    rub = answer_relevance(q, "The premium is $604.", judge=scripted_judge, encoder=encoder, method="rubric")
    assert rub.value == 25.0 and rub.details["method"] == "rubric"  # an encoder does not switch the formula
    # a declining answer is undetermined (#38: judged apart, ABSTAIN), no longer 0 from ragas' noncommittal flag
    declined = answer_relevance(q, "I don't know.", judge=scripted_judge, encoder=encoder, method="embedding")
    assert declined.value is None and declined.details["abstention"] is True
    with pytest.raises(ValueError, match=r"method must be one of \['auto', 'embedding', 'rubric'\]"):
        answer_relevance(q, a, judge=scripted_judge, method="cosine")


def test_answer_relevance_auto_is_resolved_once_per_run(judge_server, sample_df):
    """Without a declared method the run resolves 'auto' once; with the embed extra here it is the
    embedding formula, and every row and the signature say so."""
    from evalkit.metrics.judged import resolve_method

    cfg = {"judge": {"base_url": judge_server.url, "model": "scripted", "cache_path": None}}
    out = evalkit.evaluate(sample_df.head(3), ["answer_relevance"], cfg, progress=False)
    assert resolve_method("auto") == "embedding"
    assert [json.loads(d)["method"] for d in out["answer_relevance_details"]] == ["embedding"] * 3
    assert out.attrs["evalkit"]["signature"]["methods"] == {"answer_relevance": "embedding"}


def test_factual_accuracy_and_answer_class(scripted_judge):
    gt = "The base premium for Territory 118 is $604 per year."
    fa = factual_accuracy("Q?", "The base premium for Territory 118 is $604 per year.", gt, judge=scripted_judge)
    assert fa.value == 100.0 and fa.details["grade"] == "A"
    wrong = factual_accuracy("Q?", "The base premium for Territory 118 is $640 per year.", gt, judge=scripted_judge)
    # scripted judge: correctness 10 * |{118,604} & {118,640}| / 2 = 5; completeness round(10 * 5/6) = 8
    # (content words base, premium, territory, 118, 604, year; 604 missing); consistency 4 (640 not in reference)
    # -> 0.5 * 50 + 0.3 * 80 + 0.2 * 40 = 57, grade C
    assert wrong.value == pytest.approx(57.0) and wrong.details["grade"] == "C"
    assert answer_class("Q?", "I do not know.", gt, judge=None).value == "DON'T KNOW"
    assert answer_class("Q?", "Territory 118 pays $604.", gt, judge=scripted_judge).value == "CORRECT"
    assert answer_class("Q?", "It is $640.", gt, judge=scripted_judge).value == "WRONG"


def test_judge_garbage_becomes_error_row(judge_server, tmp_path):
    df = pd.DataFrame({"id": ["ok", "bad"], "question": ["Q?", "Q?"], "contexts": [CTX, CTX],
                       "answer": ["Territory 205 pays $512.", "FAULT_GARBAGE Territory 205 pays $512."],
                       "ground_truth": ["Territory 205 pays $512.", "Territory 205 pays $512."]})
    cfg = {"judge": {"base_url": judge_server.url, "model": "scripted", "cache_path": None, "backoff": 0.01}}
    out = evalkit.evaluate(df, ["faithfulness", "factual_accuracy"], cfg, progress=False)
    assert out.loc[0, "faithfulness"] == 100.0 and pd.isna(out.loc[1, "faithfulness"])
    assert "faithfulness: JudgeError" in out.loc[1, "error"] and "factual_accuracy: JudgeError" in out.loc[1, "error"]
    assert out.loc[0, "factual_accuracy_grade"] == "A"
    meta = out.attrs["evalkit"]["judge"]
    assert meta["signature"] == "openai-chat:scripted@t0,rf=json_schema" and len(meta["prompts_sha256"]) == 64
    assert meta["usage"]["faithfulness"]["failures"] >= 1


def test_ragas_score_runs_its_components(judge_server, sample_df):
    cfg = {"judge": {"base_url": judge_server.url, "model": "scripted", "cache_path": None}}
    out = evalkit.evaluate(sample_df.head(4), ["ragas_score"], cfg, progress=False)
    parts = out[["faithfulness", "context_precision", "context_recall", "answer_relevance"]].astype(float)
    assert parts.notna().all().all()
    # the documented weights, written out: 0.3 F + 0.2 CP + 0.2 CR + 0.3 AR (they sum to 1)
    by_hand = (0.3 * parts["faithfulness"] + 0.2 * parts["context_precision"] + 0.2 * parts["context_recall"]
               + 0.3 * parts["answer_relevance"])
    assert out["ragas_score"].astype(float).tolist() == pytest.approx(by_hand.tolist(), rel=1e-12)
    weights = {"faithfulness": 2, "context_precision": 0, "context_recall": 0, "answer_relevance": 2}
    equal = evalkit.evaluate(sample_df.head(4), ["ragas_score"], {**cfg, "metric_params": {"ragas_score": {
        "weights": weights}}}, progress=False)
    assert equal["ragas_score"].astype(float).tolist() == pytest.approx(
        ((parts["faithfulness"] + parts["answer_relevance"]) / 2).tolist(), rel=1e-12)  # weights renormalised


def test_answer_class_counts_per_system(judge_server, sample_df):
    cfg = {"judge": {"base_url": judge_server.url, "model": "scripted", "cache_path": None}}
    out = evalkit.evaluate(sample_df, ["answer_class"], cfg, progress=False)
    s = evalkit.summary(out, by="system", metrics=["answer_class"]).set_index("system")
    counts = json.loads(s.loc["rag-b", "counts"])
    assert sum(counts.values()) == 42 and counts["DON'T KNOW"] >= 3 and counts["CORRECT"] < counts.get("WRONG", 0) + 20


def test_declared_embedding_method_without_the_extra_is_skipped_not_switched(judge_server, sample_df, monkeypatch,
                                                                            caplog):
    import evalkit.base.encoders

    monkeypatch.setattr(evalkit.base.encoders, "available", lambda: False)
    cfg = {"judge": {"base_url": judge_server.url, "model": "scripted", "cache_path": None},
           "metric_params": {"answer_relevance": {"method": "embedding"}}}
    out = evalkit.evaluate(sample_df.head(2), ["answer_relevance", "faithfulness"], cfg, progress=False)
    assert "answer_relevance" not in out.columns and "faithfulness" in out.columns
    assert "skipped answer_relevance: install the embed extra" in caplog.text


def test_combine_repeats_mean_majority_and_errors():
    from evalkit.judge import JudgeError
    from evalkit.metrics.base import Score
    from evalkit.metrics.judged import combine_repeats

    s = combine_repeats([Score(50.0, {"total": 2}), JudgeError("bad reply"), Score(100.0, {"total": 2})])
    assert s.value == 75.0 and s.details["repeats"] == (50.0, None, 100.0)
    assert s.details["repeat_errors"] == ("repeat 1: JudgeError: bad reply",)
    assert combine_repeats([Score(None, {"reason": "no ground truth"})] * 2).value is None
    assert combine_repeats([Score("WRONG", {}), Score("CORRECT", {}), Score("WRONG", {})]).value == "WRONG"
    err = JudgeError("down")
    assert combine_repeats([err, JudgeError("down again")]) is err


def _fixed_context_judge(verdicts):
    from evalkit.judge import JudgeConfig, OpenAIJudge
    from evalkit.testing import ScriptedJudgeServer

    srv = ScriptedJudgeServer(replies=[{"when": "numbered passage",
                                        "reply": {"verdicts": verdicts, "classifications": []}}])
    return srv, lambda: OpenAIJudge(JudgeConfig(base_url=srv.url, model="m", cache_path=None, backoff=0.01))


def test_context_verdicts_are_matched_by_their_index_not_their_place_in_the_reply():
    # the judge lists passage 3 first: ranked by index the verdicts are [0, 0, 1], so AP@3 = (1/3) / 1 = 33.3
    # (matched by place they would read [1, 0, 0] and give AP 100)
    srv, judge = _fixed_context_judge([{"context": 3, "verdict": 1, "reason": "r3"},
                                       {"context": 1, "verdict": 0, "reason": "r1"},
                                       {"context": 2, "verdict": 0, "reason": "r2"}])
    with srv:
        s = context_precision("Q?", ["a.", "b.", "c."], "c.", judge=judge())
    assert [v["verdict"] for v in s.details["verdicts"]] == [0, 0, 1]
    assert [v["reason"] for v in s.details["verdicts"]] == ["r1", "r2", "r3"]
    assert s.value == pytest.approx(100 / 3) and s.details["average_precision_at_k"] == pytest.approx(100 / 3)


@pytest.mark.parametrize("verdicts,message", [
    ([{"context": 1, "verdict": 1}, {"context": 1, "verdict": 0}, {"context": 2, "verdict": 0}], "context 1 two verdicts"),
    ([{"context": 1, "verdict": 1}, {"context": 2, "verdict": 0}, {"context": 4, "verdict": 0}],
     r"contexts \[1, 2, 4\]; expected each of 1..3 once"),
    ([{"verdict": 1}, {"context": 2, "verdict": 0}, {"context": 3, "verdict": 0}], "expected an object with a context"),
])
def test_context_verdicts_with_a_duplicate_or_missing_index_are_a_judge_error(verdicts, message):
    from evalkit.judge.client import JudgeError

    srv, judge = _fixed_context_judge(verdicts)
    with srv:
        with pytest.raises(JudgeError, match=message):
            context_precision("Q?", ["a.", "b.", "c."], "c.", judge=judge())
        df = pd.DataFrame({"id": ["r"], "question": ["Q?"], "contexts": [["a.", "b.", "c."]], "answer": ["c."],
                           "ground_truth": ["c."]})
        cfg = {"judge": {"base_url": srv.url, "model": "m", "cache_path": None, "backoff": 0.01}}
        out = evalkit.evaluate(df, ["context_precision"], cfg, progress=False)
    assert pd.isna(out.loc[0, "context_precision"])  # the runner records it on the row, the run goes on
    assert "context_precision: JudgeError" in out.loc[0, "error"]


def test_answer_relevance_does_not_follow_the_order_the_judge_replies_in(judge_server, encoder):
    """Two rows share a question; the judge answers them in one order, then in the other (one worker, rows
    reversed). A row's value is the same to the last bit: no row reuses a text encoded in another row's batch,
    whose padding differs (before: 1e-9 apart, so a judged run's results differed from one run to the next)."""
    from types import SimpleNamespace

    from evalkit.base.encoders import StateMemo
    from evalkit.judge import JudgeConfig, OpenAIJudge
    from evalkit.metrics.judged import answer_relevance_batch

    q = "How long does the battery of the Korvel KT-30 last?"
    answers = ["Up to 90 minutes, and it recharges fully in 4 hours from an empty battery on the supplied dock.",
               "90 minutes."]
    judge = OpenAIJudge(JudgeConfig(base_url=judge_server.url, model="scripted", cache_path=None, backoff=0.01,
                                    concurrency=1))
    try:
        values = []
        for order in (answers, answers[::-1]):
            resources = SimpleNamespace(judge=judge, encoder=encoder.bound(StateMemo()))
            out = answer_relevance_batch({"question": [q, q], "answer": order}, {"method": "embedding"}, resources)
            values.append(dict(zip(order, (s.value for s in out))))
    finally:
        judge.close()
    assert values[0] == values[1]
    assert all(v is not None for v in values[0].values())
