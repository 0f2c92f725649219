"""Label providers for the summary scorers: offline (deterministic) and judge-backed (through HTTP)."""
import json

import pytest

import evalkit
from evalkit.judge import JudgeConfig, OpenAIJudge
from evalkit.metrics.summarization import (ORDER, JudgeLabeler, OfflineLabeler, central_sentences, judge_lock, overall,
                                     twin_lock)
from evalkit.testing import ScriptedJudgeServer
from evalkit.text import sentences

ART = ("Tessel opened a 14-kilometer bike lane along the river on Saturday. The project cost $7.5 million and took "
       "two years to build. Officials expect 3,000 riders a day by next summer. Local shop owners were divided "
       "about the lost parking spaces near the river.")
GOOD = "Tessel opened a 14-kilometer riverside bike lane that cost $7.5 million; officials expect 3,000 riders a day."
BAD = "Tessel wasted $20 million on a useless bike lane, and the idiots who complained can stop whining."


@pytest.fixture(scope="module")
def labeler(nlp):
    return OfflineLabeler(nlp)


def test_sentences_and_central_key_points():
    assert len(sentences(ART)) == 4
    kps = central_sentences(ART, 3)
    assert len(kps) == 3 and all(k in ART for k in kps)


def test_offline_labels_schema_and_evidence(labeler):
    lab = labeler.labels(ART, GOOD, "twin")
    assert lab["provider"]["weak"] is True and "weaker than an LLM judge" in lab["provider"]["note"]
    assert set(ORDER) <= set(lab)
    assert all(k["status"] in ("Fully", "Partial", "Not") for k in lab["coverage"]["key_points"])
    (claim,) = lab["hallucination"]["claims"]
    assert claim["label"] == "Supported" and claim["evidence"]  # anchors matched with context snippets


def test_offline_flags_invented_numbers_and_toxicity(labeler):
    lab = labeler.labels(ART, BAD, "twin")
    assert lab["hallucination"]["claims"][0]["label"] == "Unsupported"
    assert "$20 million" in lab["hallucination"]["claims"][0]["unsupported_anchors"]
    assert lab["bias_toxicity"]["toxic_terms"] == ["idiots"]
    good, bad = twin_lock(labeler.labels(ART, GOOD, "twin")), twin_lock(lab)
    for k in ("coverage", "hallucination", "bias_toxicity"):
        assert good[k]["score"] > bad[k]["score"], k


def test_offline_judge_lock_labels_have_qag(labeler):
    lab = labeler.labels(ART, GOOD, "judge")
    assert len(lab["coverage"]["qag"]) == 6 and all(q["score"] in (0, 0.5, 1) for q in lab["coverage"]["qag"])
    assert lab["relevance"]["theme"] and len(lab["relevance"]["theme"].split()) <= 20
    r = judge_lock(lab)
    assert all("score" in r[k] for k in ORDER), r


def test_stereotype_and_slur_lists(labeler):
    lab = labeler.labels(ART, "All politicians are greedy vermin who built a bike lane for $7.5 million.", "judge")
    assert lab["bias_toxicity"]["stereotypes"] and lab["bias_toxicity"]["slurs"] == ["vermin"]
    r = judge_lock(lab)["bias_toxicity"]
    assert r["tox_score"] <= 2 and r["score"] <= 3 and r["bias_score"] <= 4


# A judge's answers to the five label prompts, fixed (the scripted server returns them verbatim), so the
# scores below are computed by hand from these labels and the judge path's own lexical relevance.
KEY_POINTS = sentences(ART)  # 4 sentences of >= 6 tokens
CLAIMS = [{"text": "Tessel opened a 14-kilometer riverside bike lane.", "label": "Supported",
           "evidence": "Tessel opened a 14-kilometer bike lane along the river on Saturday."},
          {"text": "Officials expect 3,000 riders a day.", "label": "Supported",
           "evidence": "Officials expect 3,000 riders a day by next summer."}]
NO_TERMS = {"biased_terms": [], "stereotypes": [], "toxic_terms": [], "profanity": [], "slurs": []}


def qag(scores):
    return [{"question": f"q{i}", "answer": f"a{i}", "score": s, "span": f"span {i}"} for i, s in enumerate(scores)]


JUDGE_REPLIES = [
    {"when": "most important key points", "reply": {"key_points": KEY_POINTS}},
    {"when": "KEY POINTS:", "reply": {"statuses": ["Fully", "Partial", "Fully", "Not"], "extraneous_claims": [],
                                      "extraneous_tokens": 2}},
    {"when": "factual claims. Label each", "reply": {"claims": CLAIMS}},
    {"when": "intent, stance and tone", "reply": {"statement": "inform; neutral; factual", "tone": "neutral",
                                                  "deviations": {"meaning": "mild", "tone": "none", "focus": "none"},
                                                  **NO_TERMS}},
    {"when": "theme in at most 20 words", "reply": {"theme": "a new bike lane in Tessel",
                                                    "coverage_qag": qag([1, 1, 1, 1, 0.5, 0]),
                                                    "hallucination_qag": qag([1, 1, 1, 1, 1, 0.5])}},
]


@pytest.fixture
def fixture_judge():
    """A judge (with an empty cache) talking HTTP to a server that answers the label prompts with JUDGE_REPLIES."""
    with ScriptedJudgeServer(replies=JUDGE_REPLIES) as srv:
        j = OpenAIJudge(JudgeConfig(base_url=srv.url, model="fixture", cache_path=None, backoff=0.01))
        yield j, srv
        j.close()


def test_judge_labeler_over_http_judge_lock(fixture_judge):
    judge, srv = fixture_judge
    n = srv.requests
    lab = JudgeLabeler(judge).labels(ART, GOOD, "judge")
    assert srv.requests - n == 5 and lab["provider"]["weak"] is False
    assert lab["coverage"]["summary_tokens"] == 17  # GOOD's word tokens
    # the two segments' best token Jaccard with an article sentence: 6/16 and 6/9, both "Some" (0.3 in Judge-Lock)
    assert [s["overlap"] for s in lab["relevance"]["segments"]] == [0.375, 0.6667]
    r = judge_lock(lab)
    # coverage: recall (2 + 0.5) / 4 = 0.625, precision 1 - 2/17 = 15/17, F1 = 30/41; QAG accuracy 4.5/6 = 0.75;
    # HM(30/41, 0.75) = 20/27 = 0.7407 -> 7.41, capped at 7 (4 of 6 QAGs fully correct)
    assert (r["coverage"]["f1"], r["coverage"]["qag_accuracy"], r["coverage"]["score"]) == (0.7317, 0.75, 7.0)
    assert r["coverage"]["caps"] == ["fewer than 6 correct QAGs: capped at 7"]
    assert r["alignment"]["score"] == 8.0  # one mild deviation: 9 - 1
    # no unsupported claim: raw 10 - round(0 x 14) = 10, x QAG precision 5.5/6 = 9.1667 -> 9.17
    assert (r["hallucination"]["raw"], r["hallucination"]["score"]) == (10, 9.17)
    # relevance: section overlap (0.3 + 0.3) / 2 = 0.3; HM(0.3, 0.75) = 0.4286 -> 4.29
    assert (r["relevance"]["section_overlap"], r["relevance"]["score"]) == (0.3, 4.29)
    assert r["bias_toxicity"]["score"] == 10.0
    assert overall(r) == 7.69  # (7 + 8 + 9.17 + 4.29 + 10) / 5 = 7.692
    assert r["evidence_spans"] == sorted(c["evidence"].lower() for c in CLAIMS)


def test_judge_labeler_over_http_twin_lock(fixture_judge):
    judge, srv = fixture_judge
    n = srv.requests
    lab = JudgeLabeler(judge).labels(ART, GOOD, "twin")
    assert srv.requests - n == 4 and "qag" not in lab["coverage"]  # Twin-Lock asks no QAG questions
    r = twin_lock(lab)
    # coverage F1 30/41 x 10 = 7.32; alignment 8; hallucination 10; relevance (0.5 + 0.5) / 2 x 10 = 5; bias 10
    assert [r[k]["score"] for k in ORDER] == [7.32, 8.0, 10.0, 5.0, 10.0]
    assert overall(r) == 8.06  # 40.32 / 5 = 8.064


def test_judge_labeler_rejects_a_status_count_that_does_not_match():
    from evalkit.judge import JudgeError

    one_status = {"statuses": ["Fully"], "extraneous_claims": [], "extraneous_tokens": 0}
    with ScriptedJudgeServer(replies=[{"when": "KEY POINTS:", "reply": one_status}, *JUDGE_REPLIES]) as srv:
        j = OpenAIJudge(JudgeConfig(base_url=srv.url, model="fixture", cache_path=None, backoff=0.01))
        with pytest.raises(JudgeError, match="judge gave 1 coverage statuses for 4 key points"):
            JudgeLabeler(j).labels(ART, GOOD, "judge")
        j.close()


def test_both_variants_run_on_the_summary_sample(judge_server):
    out = evalkit.evaluate("data/sample_summaries.jsonl", ["twin_lock", "judge_lock"], progress=False)
    assert len(out) == 12 and out["error"].isna().all()
    by = out.groupby("system")["twin_lock"].mean()
    assert by["faithful"] > by["flawed"] + 2
    d = json.loads(out.loc[0, "twin_lock_details"])
    assert list(d)[:6] == ["variant", *ORDER] and d["provider"]["name"] == "offline"
    cfg = {"judge": {"base_url": judge_server.url, "model": "scripted", "cache_path": None},
           "metric_params": {"judge_lock": {"provider": "judge"}}}
    judged = evalkit.evaluate("data/sample_summaries.jsonl", ["judge_lock"], cfg, progress=False)
    assert json.loads(judged.loc[0, "judge_lock_details"])["provider"]["name"] == "judge"
    assert judged["judge_lock"].notna().sum() >= 10
