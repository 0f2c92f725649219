"""Label providers for the summary scorers: offline (deterministic) and judge-backed (through HTTP)."""
import json

import pytest

import evalkit
from evalkit.metrics.summary import ORDER, judge_lock, twin_lock
from evalkit.summary_labels import JudgeLabeler, OfflineLabeler, central_sentences, sentences

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


def test_judge_labeler_over_http(scripted_judge, labeler):
    jl = JudgeLabeler(scripted_judge)
    lab = jl.labels(ART, BAD, "judge")
    assert lab["provider"]["weak"] is False and len(lab["coverage"]["qag"]) == 6
    assert lab["hallucination"]["claims"][0]["label"] == "Unsupported"
    r = judge_lock(lab)
    assert all("score" in r[k] for k in ORDER)


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
