"""The resource table (issue 26, item 3): every resource a metric names is in it, each loads once per run and
key, the run's needs follow the configuration, and a run signs exactly the resources it made."""
from __future__ import annotations

import pytest

from evalkit.base.config import EvalConfig
from evalkit.judge import NOT_CONFIGURED
from evalkit.judge.dryrun import make_dry_judge
from evalkit.metrics import REGISTRY
from evalkit.run.resources import RESOURCES, Resources, needed_resources, resource_problem, shipped_models

JUDGE = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "cache_path": None}


def test_every_resource_a_metric_names_is_in_the_table():
    named = {r for m in REGISTRY.values() for r in m.resources}
    assert named <= set(RESOURCES), sorted(named - set(RESOURCES))
    assert {"nlp", "encoder", "bertscore", "judge", "support_model"} <= named  # the table is read, not bypassed


def test_the_configuration_adds_what_a_metric_switches_to():
    plain = EvalConfig()
    assert needed_resources(REGISTRY["twin_lock"], plain) == ("nlp",)
    judged = EvalConfig(metric_params={"twin_lock": {"provider": "judge"}})
    assert needed_resources(REGISTRY["twin_lock"], judged) == ("nlp", "judge")
    embed = EvalConfig(metric_params={"hallucination": {"align": "embedding"}})
    assert "encoder" in needed_resources(REGISTRY["hallucination"], embed)
    assert "encoder" not in needed_resources(REGISTRY["hallucination"], plain)


def test_a_judged_metric_without_a_judge_says_how_to_configure_one():
    assert resource_problem(REGISTRY["answer_relevance"], EvalConfig()) == NOT_CONFIGURED
    assert resource_problem(REGISTRY["answer_relevance"], EvalConfig(judge=JUDGE)) is None
    assert resource_problem(REGISTRY["relevance"], EvalConfig()) is None


def test_each_resource_is_made_once_per_key_and_signed_only_when_made():
    made = []

    def factory(settings):
        made.append(settings["model"])
        return make_dry_judge(settings)

    cfg = EvalConfig(judge=JUDGE, metric_params={"faithfulness": {"judge": {"model": "own"}}})
    res = Resources(cfg, judge_factory=factory)
    assert res.signatures() == {} and res.judges() == {}
    assert res.judge is res.judge and res.judge_for("faithfulness") is res.judge_for("faithfulness")
    assert made == ["m", "own"]  # the run's judge and the metric's own, each once
    assert res.judge_for("answer_relevance") is res.judge  # no override: the run's
    sig = res.signatures()
    assert set(sig) == {"judge", "judge_faithfulness"}
    assert sig["judge_faithfulness"] == f"judge[faithfulness]:{res.judge_for('faithfulness').signature()}"
    assert list(res.judges()) == ["", "faithfulness"]


def test_a_stand_in_must_name_a_known_resource():
    res = Resources(EvalConfig())
    with pytest.raises(KeyError, match="unknown resource 'nlpp'"):
        res.provide("nlpp", object())


def test_shipped_models_follow_the_metrics_that_read_them():
    assert set(shipped_models(["support"])) == {"support_model"}
    assert set(shipped_models(["grounding_risk", "relevance"])) == {"grounding_model", "support_model"}
    assert shipped_models(["relevance", "not_a_metric"]) == {}


def test_a_bad_rules_file_stops_the_run_before_any_row(tmp_path):
    import pandas as pd

    import evalkit
    from evalkit.metrics.factchecks import FactCheckError

    bad = tmp_path / "rules.yaml"
    bad.write_text("rules: [unclosed\n")
    rows = pd.DataFrame({"id": ["q1"], "question": ["Q?"], "answer": ["A."]})
    with pytest.raises(FactCheckError, match="rules.yaml: invalid YAML"):
        evalkit.evaluate(rows, ["fact_checks"], {"fact_checks": str(bad)}, progress=False)
    res = Resources(EvalConfig(fact_checks=str(bad)))
    with pytest.raises(FactCheckError):
        res.load_eager([REGISTRY["fact_checks"]])
    res.load_eager([REGISTRY["relevance"]])  # needs no rules: nothing read
    assert res.loaded("rules") is None
