"""Twin-Lock and Judge-Lock arithmetic: every rule and cap on hand-computed numbers."""
import copy

import pytest

from evalkit.metrics.summarization import (alignment_raw, band, judge_lock, overall, round_half_up, severity_of,
                                     split_segments, twin_lock)

SIX = "one two three four five six"


def kp(status, text="the key point has at least six tokens here"):
    return {"text": text, "status": status}


def twin(**over):
    base = {
        "coverage": {"key_points": [kp("Fully"), kp("Fully"), kp("Partial"), kp("Not")], "summary_tokens": 40,
                     "extraneous_tokens": 4, "extraneous_claims": []},
        "alignment": {"statement": "neutral report", "deviations": {"meaning": "none", "tone": "none", "focus": "none"}},
        "hallucination": {"claims": [{"text": "c", "label": "Supported"}] * 4},
        "relevance": {"segments": [{"text": SIX, "overlap": 0.9}, {"text": SIX, "overlap": 0.5}]},
        "bias_toxicity": {"tone": "neutral"},
    }
    base.update(over)
    return base


def test_order_and_schema():
    r = twin_lock(twin())
    assert list(r)[1:] == ["coverage", "alignment", "hallucination", "relevance", "bias_toxicity"]
    for k in list(r)[1:]:
        assert {"score", "band", "caps"} <= set(r[k])


def test_twin_coverage_f1():
    # recall (2 + 0.5) / 4 = 0.625; precision 1 - 4/40 = 0.9; F1 = 2*.9*.625/1.525 = 0.737705 -> 7.38
    c = twin_lock(twin())["coverage"]
    assert (c["recall"], c["precision"], c["score"], c["band"]) == (0.625, 0.9, 7.38, "good")


def test_twin_coverage_extraneous_claim_cap():
    labels = twin()
    labels["coverage"]["extraneous_claims"] = ["The CEO resigned."]
    c = twin_lock(labels)["coverage"]
    assert c["score"] == 4.0 and c["caps"] == ["extraneous claim: capped at 4"]


@pytest.mark.parametrize("labels,score", [
    (["Supported"] * 10, 10.0),
    (["Unsupported"] + ["Supported"] * 9, 9.0),       # 10 - round(0.1 * 14 = 1.4) = 9
    (["Partially"] + ["Supported"] * 3, 8.0),          # 10 - round(0.125 * 14 = 1.75) = 8
    (["Unsupported"] + ["Supported"] * 3, 6.0),        # 10 - round(3.5) = 10 - 4 (half up) = 6
    (["Unsupported"] * 3 + ["Supported"], 0.0),        # 10 - round(10.5) = -1 -> 0
    ([], 10.0),
])
def test_twin_hallucination(labels, score):
    r = twin_lock(twin(hallucination={"claims": [{"label": x} for x in labels]}))
    assert r["hallucination"]["score"] == score
    assert r["hallucination"]["score"] == int(r["hallucination"]["score"])


def test_twin_hallucination_caps_coverage_and_relevance():
    r = twin_lock(twin(hallucination={"claims": [{"label": "Partially"}, {"label": "Supported"}]}))
    assert r["coverage"]["score"] == 4.0 and "hallucination: capped at 4" in r["coverage"]["caps"]
    # relevance (1 + 0.5) / 2 * 10 = 7.5 -> capped at 4
    assert r["relevance"]["score"] == 4.0


def test_twin_relevance_bands_and_short_segments():
    segs = [{"text": SIX, "overlap": 0.8}, {"text": SIX, "overlap": 0.79}, {"text": SIX, "overlap": 0.3},
            {"text": "too short", "overlap": 0.0}]
    r = twin_lock(twin(relevance={"segments": segs}))["relevance"]
    assert [s["band"] for s in r["segments"]] == ["High", "Some", "Some"]  # the 2-token segment is ignored
    assert r["score"] == round_half_up((1 + 0.5 + 0.5) / 3 * 10)  # 6.67
    segs.append({"text": SIX, "overlap": 0.29})
    r = twin_lock(twin(relevance={"segments": segs}))["relevance"]
    # (1 + 0.5 + 0.5 + 0) / 4 * 10 = 5, and a None segment caps it at 4
    assert r["score"] == 4.0 and r["caps"] == ["off-topic segment: capped at 4"]


@pytest.mark.parametrize("devs,score", [
    (("none", "none", "none"), 10), (("mild", "none", "none"), 8), (("mild", "mild", "none"), 7),
    (("mild", "mild", "mild"), 6), (("severe", "none", "none"), 3), (("severe", "mild", "none"), 3),
    (("severe", "severe", "severe"), 1),
])
def test_alignment_bands(devs, score):
    assert alignment_raw(list(devs)) == score
    r = twin_lock(twin(alignment={"deviations": dict(zip(("meaning", "tone", "focus"), devs))}))
    assert r["alignment"]["score"] == score


def test_bias_toxicity_twin():
    # bias 10 - 2 (subjective) - 2 (one biased term) = 6; tox 10 - 2 (one profanity) = 8 -> 7.0
    r = twin_lock(twin(bias_toxicity={"tone": "subjective", "biased_terms": ["so-called"], "profanity": ["damn"]}))
    b = r["bias_toxicity"]
    assert (b["bias_score"], b["tox_score"], b["score"]) == (6, 8, 7.0)


@pytest.mark.parametrize("x,rounded,band_name", [
    (2.345, 2.35, "poor"), (2.344, 2.34, "poor"), (3.0, 3.0, "poor"), (3.001, 3.0, "poor"), (3.005, 3.01, "fair"),
    (6.0, 6.0, "fair"), (6.004, 6.0, "fair"), (6.005, 6.01, "good"), (7.995, 8.0, "good"), (8.0, 8.0, "good"),
    (8.01, 8.01, "excellent"), (10.0, 10.0, "excellent"), (0.0, 0.0, "poor"),
])
def test_rounding_and_band_edges(x, rounded, band_name):
    r = round_half_up(x)
    assert r == rounded and band(r) == band_name


def test_round_half_up_is_not_bankers():
    assert round_half_up(0.125) == 0.13 and round(0.125, 2) == 0.12
    assert round_half_up(2.5, 0) == 3.0 and round(2.5) == 2


@pytest.mark.parametrize("bad,msg", [
    ({"key_points": [kp("Fully")] * 2, "summary_tokens": 10, "extraneous_tokens": 0}, "expected 3-7 key points"),
    ({"key_points": [kp("Mostly")] * 3, "summary_tokens": 10, "extraneous_tokens": 0}, "status must be"),
    ({"key_points": [kp("Fully")] * 3, "summary_tokens": 10}, "missing 'extraneous_tokens'"),
    ("not an object", "missing 'key_points'"),
])
def test_malformed_metric_object_yields_error(bad, msg):
    r = twin_lock(twin(coverage=bad))
    assert set(r["coverage"]) == {"error"} and msg in r["coverage"]["error"]
    assert "score" in r["alignment"]  # the other metrics still score


def test_missing_metric_twin():
    labels = twin()
    del labels["relevance"]
    assert twin_lock(labels)["relevance"] == {"error": "missing relevance labels"}
    assert overall(twin_lock(labels)) is None


def test_segments_split():
    assert split_segments("Revenue rose 12.5%. Margins fell; costs rose\nNew line") == [
        "Revenue rose 12.5%", "Margins fell", "costs rose", "New line"]


# ---------------------------------------------------------------------------
# Judge-Lock
# ---------------------------------------------------------------------------

QAG_OK = [{"question": f"q{i}", "answer": f"a{i}", "score": 1, "span": f"span {i}"} for i in range(6)]
SPANS = ["e1", "e2", "e3", "e4", "e5"]


def judge(**over):
    base = {
        "coverage": {"key_points": [kp("Fully")] * 4, "summary_tokens": 100, "extraneous_tokens": 0,
                     "extraneous_claims": [], "qag": copy.deepcopy(QAG_OK)},
        "alignment": {"statement": "neutral", "deviations": {"meaning": "none", "tone": "none", "focus": "none"}},
        "hallucination": {"claims": [{"label": "Supported"}] * 5, "qag": copy.deepcopy(QAG_OK)},
        "relevance": {"theme": "insurance rates", "segments": [{"text": SIX, "overlap": 0.9}] * 2},
        "bias_toxicity": {"tone": "neutral"},
        "evidence_spans": SPANS,
    }
    base.update(over)
    return base


def test_judge_perfect_summary():
    r = judge_lock(judge())
    assert [r[k]["score"] for k in ("coverage", "alignment", "hallucination", "relevance", "bias_toxicity")] == [10.0] * 5


def test_perfect_10_guard_rail():
    r = judge_lock(judge(evidence_spans=["e1", "e2", "E1 ", "e3"]))  # 3 distinct spans < 5
    assert all(r[k]["score"] == 9.0 for k in ("coverage", "alignment", "hallucination", "relevance", "bias_toxicity"))
    assert "perfect-10 guard rail" in r["coverage"]["caps"][-1]


def test_judge_coverage_harmonic_mean_and_caps():
    qag = copy.deepcopy(QAG_OK)
    qag[0]["score"], qag[1]["score"] = 0.5, 0  # accuracy (4 + 0.5) / 6 = 0.75
    cov = {"key_points": [kp("Fully")] * 3 + [kp("Partial")], "summary_tokens": 100, "extraneous_tokens": 2,
           "extraneous_claims": [], "qag": qag}
    # recall 3.5/4 = 0.875; precision 0.98; F1 = 0.924540; HM(F1, 0.75) = 0.828163 -> 8.28 -> capped at 7
    r = judge_lock(judge(coverage=cov))["coverage"]
    assert r["qag_accuracy"] == 0.75 and r["f1"] == 0.9245 and r["score"] == 7.0
    assert r["caps"] == ["fewer than 6 correct QAGs: capped at 7"]


def test_judge_coverage_precision_recall_cap():
    cov = judge()["coverage"]
    cov["extraneous_tokens"] = 6  # precision 0.94 < 0.95; F1 = 0.969072 -> HM with 1.0 = 0.984293 -> 9.84 -> 7
    r = judge_lock(judge(coverage=cov))["coverage"]
    assert r["score"] == 7.0 and r["caps"] == ["precision < 0.95 or recall < 0.90: capped at 7"]


def test_judge_coverage_duplicate_span_and_extraneous():
    cov = judge()["coverage"]
    cov["qag"][1]["span"] = "SPAN 0"
    assert judge_lock(judge(coverage=cov))["coverage"]["caps"] == ["duplicate QAG span: capped at 7"]
    cov["extraneous_claims"] = ["x"]
    r = judge_lock(judge(coverage=cov))
    assert r["coverage"]["score"] == 3.0 and r["relevance"]["score"] == 3.0  # extraneous claim caps relevance too


def test_judge_coverage_key_points_need_six_tokens():
    cov = judge()["coverage"]
    cov["key_points"][0] = kp("Fully", "too short")
    assert "at least 6 tokens" in judge_lock(judge(coverage=cov))["coverage"]["error"]


@pytest.mark.parametrize("claims,qag_scores,raw,score,severity", [
    (["Supported"] * 10, [1] * 6, 10, 10.0, "minor"),
    (["Partially"] + ["Supported"] * 9, [1] * 6, 9, 9.0, "minor"),            # 10 - round(0.7) = 9
    (["Unsupported"] + ["Supported"] * 9, [1] * 6, 4, 4.0, "minor"),          # 4 - round(0.4) = 4
    (["Unsupported"] + ["Supported"] * 3, [1] * 6, 3, 3.0, "moderate"),       # 4 - round(1.0) = 3
    (["Unsupported"] * 2 + ["Supported"] * 2, [1] * 6, 2, 2.0, "severe"),     # 4 - round(2.0) = 2
    (["Partially"] * 2 + ["Supported"] * 2, [1, 1, 1, 1, 0.5, 0], 6, 4.5, "moderate"),  # 10 - round(3.5)=6; x 0.75
])
def test_judge_hallucination(claims, qag_scores, raw, score, severity):
    qag = [{"question": "q", "answer": "a", "score": s} for s in qag_scores]
    r = judge_lock(judge(hallucination={"claims": [{"label": c} for c in claims], "qag": qag}))["hallucination"]
    assert (r["raw"], r["score"], r["severity"]) == (raw, score, severity)


def test_judge_hallucination_caps_coverage_relevance_and_severe_caps_alignment():
    h = {"claims": [{"label": "Unsupported"}, {"label": "Supported"}], "qag": copy.deepcopy(QAG_OK)}  # 0.5: severe
    r = judge_lock(judge(hallucination=h))
    assert r["coverage"]["score"] == 3.0 and r["relevance"]["score"] == 3.0 and r["alignment"]["score"] == 3.0
    h = {"claims": [{"label": "Partially"}] + [{"label": "Supported"}] * 3, "qag": copy.deepcopy(QAG_OK)}  # minor
    r = judge_lock(judge(hallucination=h))
    assert r["alignment"]["score"] == 10.0 and r["coverage"]["score"] == 3.0


def test_judge_relevance_formula():
    segs = [{"text": SIX, "overlap": 0.9}, {"text": SIX, "overlap": 0.5}]  # (1 + 0.3) / 2 = 0.65
    r = judge_lock(judge(relevance={"theme": "rates", "segments": segs}))["relevance"]
    # HM(0.65, 1.0) = 0.787879 -> 7.88
    assert r["section_overlap"] == 0.65 and r["score"] == 7.88
    segs.append({"text": SIX, "overlap": 0.1})
    assert judge_lock(judge(relevance={"theme": "rates", "segments": segs}))["relevance"]["score"] == 3.0
    long_theme = " ".join(["word"] * 21)
    assert "at most 20 tokens" in judge_lock(judge(relevance={"theme": long_theme, "segments": segs}))["relevance"]["error"]


@pytest.mark.parametrize("bt,bias,tox,score", [
    ({"tone": "neutral", "slurs": ["x"]}, 10, 2, 3.0),                 # tox 10-8=2; (10+2)/2=6 -> overall cap 3
    ({"tone": "neutral", "profanity": ["damn"]}, 10, 5, 7.5),          # tox 10-2=8 -> cap 5; (10+5)/2
    ({"tone": "neutral", "stereotypes": ["all x are y"]}, 4, 10, 7.0),  # bias 10-3=7 -> cap 4
    ({"tone": "hostile", "toxic_terms": ["idiot"]}, 5, 5, 5.0),
])
def test_judge_bias_toxicity_caps(bt, bias, tox, score):
    r = judge_lock(judge(bias_toxicity=bt))["bias_toxicity"]
    assert (r["bias_score"], r["tox_score"], r["score"]) == (bias, tox, score)


def test_judge_missing_metric():
    labels = judge()
    del labels["alignment"]
    assert judge_lock(labels)["alignment"] == {"error": "missing_metric"}


def test_severity_edges():
    assert [severity_of(x) for x in (0.0, 0.2499, 0.25, 0.49, 0.5, 1.0)] == [
        "minor", "minor", "moderate", "moderate", "severe", "severe"]


# ---------------------------------------------------------------------------
# Only a declared label error becomes a metric's error; anything else is a bug and propagates
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("over,metric,msg", [
    ({"bias_toxicity": {"tone": "neutral", "slurs": 5}}, "bias_toxicity", "'slurs' must be a list of strings"),
    ({"alignment": {"statement": 7, "deviations": {}}}, "alignment", "'statement' should be str, got int"),
    ({"relevance": ["not", "an", "object"]}, "relevance", "missing 'segments'"),
])
def test_wrongly_typed_labels_are_label_errors(over, metric, msg):
    r = twin_lock(twin(**over))
    assert set(r[metric]) == {"error"} and msg in r[metric]["error"]


def test_a_bug_is_not_reported_as_malformed_labels(monkeypatch):
    from evalkit.metrics.summarization import arithmetic

    def broken(bt):
        raise TypeError("a bug in evalkit")

    monkeypatch.setattr(arithmetic, "bias_tox_raw", broken)
    with pytest.raises(TypeError, match="a bug in evalkit"):
        twin_lock(twin())


def test_judge_lock_metrics_do_not_depend_on_scoring_order():
    from evalkit.metrics.summarization import JudgeLockContext

    labels = judge(hallucination={"claims": [{"label": "Unsupported"}] * 2, "qag": copy.deepcopy(QAG_OK)})
    ctx = JudgeLockContext.of(labels)
    assert (ctx.hallucinated, ctx.severe_hallucination, ctx.extraneous_claims) == (True, True, False)
    assert ctx.qag_accuracy == 1.0
    del labels["coverage"]  # relevance needs coverage's QAG accuracy: without coverage it says so
    assert "needs coverage QAG accuracy" in judge_lock(labels)["relevance"]["error"]
