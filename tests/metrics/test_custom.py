"""Custom judged metrics from data, register_metric, and per-metric judges (evalkit/metrics/custom.py), against
the scripted server on 127.0.0.1 with fixed replies: every expected value below is a reply written here by hand."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import evalkit
from evalkit.base.config import ConfigError, EvalConfig
from evalkit.metrics import REGISTRY, Score
from evalkit.metrics.custom import scoped, scoring_prompt
from evalkit.run.runner import as_config
from evalkit.testing import ScriptedJudgeServer

CRITERIA = "Is the answer short and to the point?"
STEPS_REPLY = {"when": ["CRITERION NAME: conciseness"], "reply": {"steps": ["Read the answer.", "Count its words."]}}
REPLIES = [
    {"when": [f"CRITERION: {CRITERIA}", "ANSWER:\nThe premium is $604."], "reply": {"score": 5, "reason": "one line"}},
    {"when": [f"CRITERION: {CRITERIA}", "ANSWER:\nWell, it depends"], "reply": {"score": 2, "reason": "rambles"}},
    {"when": [f"CRITERION: {CRITERIA}", "ANSWER:\nIt is $250"], "reply": {"score": 4, "reason": "short"}},
    {"when": [f"CRITERION: {CRITERIA}", "ANSWER:\nThere are many factors"], "reply": {"score": 1, "reason": "evasive"}},
    STEPS_REPLY,
]
YAML = f"""\
custom_metrics:
  - name: conciseness
    criteria: "{CRITERIA}"
    inputs: [question, answer]
    scale: [1, 5]
    rubric:
      1: rambling or evasive
      5: one direct sentence
"""


@pytest.fixture(autouse=True)
def _overlay_restored():
    with scoped():  # whatever a test registers is gone afterwards
        yield


def _frame() -> pd.DataFrame:
    return pd.DataFrame({
        "id": ["a1", "a2", "b1", "b2"], "system": ["A", "A", "B", "B"],
        "question": ["What is the premium?", "What is the deductible?", "What is the premium?",
                     "What is the deductible?"],
        "answer": ["The premium is $604.", "Well, it depends on many things, maybe $500 or so.", "It is $250",
                   "There are many factors to weigh here."],
        "label": ["good", "bad", "good", "bad"]})


def _config(tmp_path, url: str, extra: str = "", cache: str | None = None) -> str:
    path = tmp_path / "cfg.yaml"
    judge = f"judge:\n  base_url: {url}\n  model: scripted\n  cache_path: {cache or 'null'}\n"
    path.write_text(YAML + judge + extra, encoding="utf-8")
    return str(path)


def test_yaml_custom_metric_scored_end_to_end(tmp_path):
    cache = str(tmp_path / "judge.sqlite")
    with ScriptedJudgeServer(replies=REPLIES) as srv:
        cfg = _config(tmp_path, srv.url, cache=cache)
        out = evalkit.evaluate(_frame(), ["conciseness"], cfg, progress=False)
        assert srv.requests == 1 + 4  # the steps once per run, then one structured call per row
        assert out["conciseness"].tolist() == [5.0, 2.0, 4.0, 1.0]
        details = [json.loads(d) for d in out["conciseness_details"]]
        assert [d["reason"] for d in details] == ["one line", "rambles", "short", "evasive"]
        assert out["error"].isna().all()
        # structured outputs: the reply's schema lists the scale's integers
        rf = srv.received[-1]["response_format"]
        assert rf["type"] == "json_schema"
        assert rf["json_schema"]["schema"]["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
        # the generated steps are in the scoring prompt, whose hash is in the signature
        assert "1. Read the answer.\n2. Count its words." in srv.received[-1]["messages"][1]["content"]
        meta = out.attrs["evalkit"]
        assert set(meta["judge"]["prompts"]) == {"custom_conciseness", "custom_steps"}
        assert meta["signature"]["judge_prompts"] == meta["judge"]["prompts"]
        again = evalkit.evaluate(_frame(), ["conciseness"], cfg, progress=False)  # cached: no call at all
        assert srv.requests == 5 and again["conciseness"].tolist() == [5.0, 2.0, 4.0, 1.0]
    m = REGISTRY["conciseness"]
    assert (m.better, m.range, m.family) == ("higher", (1.0, 5.0), "custom")
    assert m.formula == f"judge, integer 1..5: {CRITERIA}"


def test_given_steps_are_used_and_hashed(tmp_path):
    with ScriptedJudgeServer(replies=REPLIES) as srv:
        base = _config(tmp_path, srv.url)
        cfg = EvalConfig.from_yaml(base)
        text = YAML.replace("    scale: [1, 5]\n", "    scale: [1, 5]\n    steps: [Count the sentences.]\n")
        (tmp_path / "steps.yaml").write_text(text + f"judge: {{base_url: '{srv.url}', model: s, cache_path: null}}\n")
        out = evalkit.evaluate(_frame(), ["conciseness"], str(tmp_path / "steps.yaml"), progress=False)
        assert srv.requests == 4  # no steps call
        assert "1. Count the sentences." in srv.received[-1]["messages"][1]["content"]
    a = scoring_prompt(cfg.custom_metrics[0], ["Read the answer."]).sha256
    b = scoring_prompt(cfg.custom_metrics[0], ["Count the sentences."]).sha256
    assert a != b and out.attrs["evalkit"]["judge"]["prompts"]["custom_conciseness"] == b


def test_runs_by_default_when_the_config_defines_it(tmp_path):
    with ScriptedJudgeServer(replies=REPLIES) as srv:
        out = evalkit.evaluate(_frame()[["id", "question", "answer"]], None, _config(tmp_path, srv.url),
                               progress=False)
    assert out["conciseness"].tolist() == [5.0, 2.0, 4.0, 1.0]


def test_listed_by_evalkit_metrics_config(tmp_path, capsys):
    from evalkit.cli import main

    cfg = _config(tmp_path, "http://127.0.0.1:9/v1")
    assert main(["metrics", "--config", cfg]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("conciseness"))
    assert "custom" in line and "1..5, higher is better" in line and CRITERIA in line
    assert main(["metrics", "--config", cfg, "--json"]) == 0
    listed = {m["name"]: m for m in json.loads(capsys.readouterr().out)}
    assert listed["conciseness"]["range"] == [1.0, 5.0] and listed["conciseness"]["needs"] == ["question", "answer"]


def test_calibrated_compared_summarised_and_shown(tmp_path):
    from evalkit.decide.calibrate import calibrate_frame
    from evalkit.decide.compare import compare_systems

    with ScriptedJudgeServer(replies=REPLIES) as srv:
        out = evalkit.evaluate(_frame(), ["conciseness"], _config(tmp_path, srv.url), progress=False)
    # the flagged class here is the good one, on the metric's better (high) side: said explicitly, since the
    # default flags a higher-is-better metric's low side (#38)
    tc = calibrate_frame(out, "conciseness", "label", positive="good", direction="higher", n_resamples=50,
                         min_per_class=2)  # four rows: a worked example, not a study
    assert tc.result.threshold == 4.0 and tc.n_used == 4  # good rows scored 5 and 4, bad ones 2 and 1
    s = evalkit.summary(out, by="system")
    assert s.set_index("system").loc["A", "mean"] == pytest.approx(3.5)  # (5 + 2) / 2
    table = compare_systems(out, ["conciseness"], "A", "B", n_resamples=50, min_pairs=1, pair_on="question")
    assert table.loc[0, "mean_a"] == pytest.approx(3.5) and table.loc[0, "mean_b"] == pytest.approx(2.5)
    view = evalkit.show(out, "a2")
    assert "conciseness" in str(view) and "rambles" in str(view)
    assert "rambles" in view._repr_html_()


BAD = [
    ({"name": "c", "inputs": ["answer"], "scale": [1, 5]}, "custom_metrics[0].criteria: required"),
    ({"name": "c", "criteria": "x", "inputs": ["output"], "scale": [1, 5]},
     "custom_metrics[0].inputs: unknown input 'output'"),
    ({"name": "c", "criteria": "x", "inputs": ["answer"], "scale": [5, 1]}, "custom_metrics[0].scale: must be"),
    ({"name": "c", "criteria": "x", "inputs": ["answer"], "scale": [1, 2.5]}, "custom_metrics[0].scale: must be"),
    ({"name": "c", "criteria": "x", "inputs": ["answer"], "scale": [1, 5], "rubric": {9: "too high"}},
     "custom_metrics[0].rubric: must map scores within [1, 5]"),
    ({"name": "c", "criteria": "x", "inputs": ["answer"], "scale": [1, 5], "direction": "up"},
     "custom_metrics[0].direction: must be 'higher' or 'lower'"),
    ({"name": "c", "criteria": "x", "inputs": ["answer"], "scale": [1, 5], "better": "up"},
     "custom_metrics[0].better: must be 'higher' or 'lower'"),
    ({"name": "c", "criteria": "x", "inputs": ["answer"], "scale": [1, 5], "better": "lower", "direction": "higher"},
     "custom_metrics[0]: better 'lower' and direction 'higher' disagree"),
    ({"name": "c", "criteria": "x", "inputs": ["answer"], "scale": [1, 5], "weight": 2},
     "custom_metrics[0]: unknown key(s) ['weight']"),
    ({"name": "faithfulness", "criteria": "x", "inputs": ["answer"], "scale": [1, 5]},
     "custom_metrics[0].name: 'faithfulness' is already a metric"),
]


@pytest.mark.parametrize("entry,message", BAD, ids=lambda x: x if isinstance(x, str) else None)
def test_bad_entries_are_refused_at_load_naming_file_and_key(tmp_path, entry, message):
    import yaml

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"custom_metrics": [entry]}), encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        as_config(str(path))
    assert str(e.value).startswith(f"{path}: ") and message in str(e.value)


def test_a_name_defined_twice_is_refused():
    entry = {"name": "c", "criteria": "x", "inputs": ["answer"], "scale": [1, 5]}
    with pytest.raises(ConfigError, match=r"custom_metrics\[1\]\.name: 'c' is defined twice"):
        EvalConfig.from_dict({"custom_metrics": [entry, entry]})


# ---------------------------------------------------------------------------
# Per-metric judges
# ---------------------------------------------------------------------------


def test_two_judges_each_see_only_their_metrics_requests(tmp_path):
    with ScriptedJudgeServer(replies=REPLIES) as run_srv, ScriptedJudgeServer(replies=REPLIES) as own_srv:
        extra = f"metric_params:\n  conciseness:\n    judge: {{base_url: '{own_srv.url}', model: other}}\n"
        cfg = _config(tmp_path, run_srv.url, extra)
        df = _frame().assign(ground_truth=["$604", "$500", "$604", "$500"])
        out = evalkit.evaluate(df, ["conciseness", "answer_class"], cfg, progress=False)
        assert out["conciseness"].tolist() == [5.0, 2.0, 4.0, 1.0]
        assert own_srv.requests == 5 and {r["model"] for r in own_srv.received} == {"other"}
        assert all("CRITERION" in r["messages"][1]["content"] for r in own_srv.received)
        assert run_srv.requests >= 1 and all("CRITERION" not in r["messages"][1]["content"]
                                             for r in run_srv.received)
        assert {r["model"] for r in run_srv.received} == {"scripted"}
    meta = out.attrs["evalkit"]
    assert meta["judge"]["per_metric"] == {"conciseness": "openai-chat:other@t0,rf=json_schema"}
    assert "judge[conciseness]:openai-chat:other@t0" in meta["signature_string"]
    assert set(meta["judge"]["usage"]) >= {"conciseness", "answer_class"}


def test_a_builtin_judged_metric_with_its_own_judge(tmp_path):
    with ScriptedJudgeServer(replies=REPLIES) as run_srv, ScriptedJudgeServer() as own_srv:
        extra = f"metric_params:\n  answer_class:\n    judge: {{base_url: '{own_srv.url}', model: grader}}\n"
        df = _frame().assign(ground_truth=["$604", "$500", "$604", "$500"])
        out = evalkit.evaluate(df, ["conciseness", "answer_class"], _config(tmp_path, run_srv.url, extra),
                               progress=False)
        # answer_class asks the judge only for rows that do not abstain: 4 rows here
        assert own_srv.requests == 4 and {r["model"] for r in own_srv.received} == {"grader"}
        assert run_srv.requests == 5 and all("CRITERION" in r["messages"][1]["content"] for r in run_srv.received)
    # the rules: CORRECT when the reference's numbers are in the answer (604 in row 1, 500 in row 2)
    assert out["answer_class"].tolist() == ["CORRECT", "CORRECT", "WRONG", "WRONG"]


def test_a_metric_with_its_own_judge_runs_without_a_run_judge(tmp_path):
    with ScriptedJudgeServer(replies=REPLIES) as srv:
        path = tmp_path / "own.yaml"
        path.write_text(YAML + f"metric_params:\n  conciseness:\n    judge: {{base_url: '{srv.url}', model: m, "
                               "cache_path: null}\n", encoding="utf-8")
        out = evalkit.evaluate(_frame(), ["conciseness"], str(path), progress=False)
    assert out["conciseness"].tolist() == [5.0, 2.0, 4.0, 1.0]
    assert out.attrs["evalkit"]["judge"]["signature"] is None


def test_own_judge_changes_signature_and_cache_key(tmp_path):
    from evalkit.run.runner import Resources

    cache = str(tmp_path / "c.sqlite")
    with ScriptedJudgeServer(replies=REPLIES) as srv:
        plain = evalkit.evaluate(_frame(), ["conciseness"], _config(tmp_path, srv.url, cache=cache), progress=False)
        n = srv.requests
        own = _config(tmp_path, srv.url, "metric_params:\n  conciseness:\n    judge: {temperature: 0.7}\n",
                      cache=cache)
        tuned = evalkit.evaluate(_frame(), ["conciseness"], own, progress=False)
        assert srv.requests == n + 5  # another judge: nothing replayed from the run judge's cache entries
        assert {r["temperature"] for r in list(srv.received)[n:]} == {0.7}
    assert plain.attrs["evalkit"]["signature_string"] != tuned.attrs["evalkit"]["signature_string"]
    assert tuned.attrs["evalkit"]["signature"]["resources"]["judge_conciseness"] == \
        "judge[conciseness]:openai-chat:scripted@t0.7,rf=json_schema"
    res = Resources(as_config(own))
    prompt, messages = scoring_prompt(res.config.custom_metrics[0], ["x"]), [{"role": "user", "content": "x"}]
    from evalkit.judge.client import JudgeRequest

    req = JudgeRequest.from_prompt(prompt, {"question": "q", "answer": "a"})
    keys = {j._key(messages, j._params("json_schema", req, None), None) for j in (res.judge, res.judge_for("conciseness"))}
    assert len(keys) == 2


def test_metric_params_judge_is_validated():
    ok = EvalConfig.from_dict({"metric_params": {"faithfulness": {"judge": {"model": "big", "temperature": 0}}}})
    as_config(ok)  # judged metrics accept judge:, which failed with "faithfulness accepts []" before
    with pytest.raises(ConfigError, match=r"metric_params\.relevance\.judge: only evalkit's judged metrics and custom metrics"):
        as_config({"metric_params": {"relevance": {"judge": {"model": "big"}}}})
    with pytest.raises(ConfigError, match=r"metric_params\.faithfulness\.judge: do not put the API key"):
        as_config({"metric_params": {"faithfulness": {"judge": {"api_key": "sk-1"}}}})
    with pytest.raises(ConfigError, match=r"metric_params\.faithfulness\.judge: unknown key 'modle'"):
        as_config({"metric_params": {"faithfulness": {"judge": {"modle": "big"}}}})


# ---------------------------------------------------------------------------
# register_metric: a Python function
# ---------------------------------------------------------------------------


def test_register_metric_scores_like_a_builtin():
    evalkit.register_metric("exclaims", lambda answer: answer.count("!") > 0, better="lower", range=None,
                            kind="bool", needs=("answer",), formula="the answer has an exclamation mark")
    evalkit.register_metric("words", lambda answer: Score(float(len(answer.split())), {"n": 1}), better="none",
                            range=(0, float("inf")), needs=("answer",))
    out = evalkit.evaluate(pd.DataFrame({"question": ["Q", "Q"], "answer": ["Yes!", "no way"]}),
                           ["exclaims", "words"], progress=False)
    assert out["exclaims"].tolist() == [True, False] and out["words"].tolist() == [1.0, 2.0]
    assert "exclaims" in [r["metric"] for _, r in evalkit.summary(out, by=None).iterrows()]


def test_register_metric_refuses_builtins_and_silent_replacement():
    with pytest.raises(ValueError, match="built-in"):
        evalkit.register_metric("relevance", len, better="higher", range=(0, 1))
    evalkit.register_metric("mine", lambda answer: 1.0, better="higher", range=(0, 1))
    with pytest.raises(ValueError, match="already registered"):
        evalkit.register_metric("mine", lambda answer: 0.0, better="higher", range=(0, 1))
    evalkit.register_metric("mine", lambda answer: 0.0, better="higher", range=(0, 1), replace=True)
    with pytest.raises(ConfigError, match="'mine' is already a metric"):  # a config cannot take it over either
        as_config({"custom_metrics": [{"name": "mine", "criteria": "x", "inputs": ["answer"], "scale": [1, 5]}]})


def test_scoped_restores_the_overlay():
    with scoped():
        evalkit.register_metric("temporary", lambda answer: 1.0, better="higher", range=(0, 1))
        assert "temporary" in REGISTRY
    assert "temporary" not in REGISTRY
    assert list(REGISTRY)[:3] == ["relevance", "completeness", "hallucination"]


def test_an_experiments_scoring_section_defines_and_validates_them(tmp_path):
    import yaml

    from evalkit.publish.experiment import ExperimentError, load_experiment

    entry = {"name": "conciseness", "criteria": CRITERIA, "inputs": ["question", "answer"], "scale": [1, 5]}
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump({"name": "e", "data": "d.csv", "scoring": {"custom_metrics": [entry]}}))
    exp = load_experiment(path)
    assert exp.config().custom_metrics[0].name == "conciseness" and REGISTRY["conciseness"].family == "custom"
    path.write_text(yaml.safe_dump({"name": "e", "data": "d.csv",
                                    "scoring": {"custom_metrics": [{**entry, "inputs": ["output"]}]}}))
    with pytest.raises(ExperimentError, match=r"exp\.yaml: scoring: custom_metrics\[0\]\.inputs: unknown input"):
        load_experiment(path)


def test_the_scripted_servers_rules_answer_a_custom_metric_without_fixed_replies(tmp_path):
    """The packaged rules: low + (high - low) x the share of the reference's content words and numbers found in
    the answer, rounded (a number of the reference missing from the answer makes the share 0)."""
    df = pd.DataFrame({"question": ["What is the premium?"] * 3,
                       "answer": ["The base premium is $604.", "The base premium is high.", "The premium is $604."],
                       "ground_truth": ["The base premium is $604."] * 3})
    text = YAML.replace("inputs: [question, answer]", "inputs: [question, answer, ground_truth]")
    (tmp_path / "r.yaml").write_text(text + "judge: {base_url: URL, model: scripted, cache_path: null}\n")
    with ScriptedJudgeServer() as srv:
        cfg = str(tmp_path / "r.yaml")
        (tmp_path / "r.yaml").write_text((tmp_path / "r.yaml").read_text().replace("URL", srv.url))
        out = evalkit.evaluate(df, ["conciseness"], cfg, progress=False)
        assert srv.requests == 1 + 3
    # the reference's content words {base, premium, 604} (3+ characters, not stop words): all found -> 5;
    # its number 604 missing -> share 0 -> 1; premium and 604 found, base missing -> 1 + round(4 x 2/3) = 4
    assert out["conciseness"].tolist() == [5.0, 1.0, 4.0]


def test_a_saved_results_file_carries_its_custom_metrics(tmp_path, capsys):
    from evalkit.cli import main
    from evalkit.metrics.custom import unregister_metric

    with ScriptedJudgeServer(replies=REPLIES) as srv:
        out = evalkit.evaluate(_frame(), ["conciseness"], _config(tmp_path, srv.url), progress=False)
    evalkit.save(out, tmp_path / "r.parquet")
    unregister_metric("conciseness")  # as in a fresh process: only the file's metadata defines it
    assert "conciseness" not in REGISTRY
    assert main(["summary", str(tmp_path / "r.parquet"), "--by", ""]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "conciseness" in x)
    assert "(1..5, higher is better) 3.000" in line  # (5 + 2 + 4 + 1) / 4


# ---------------------------------------------------------------------------
# Names that would overwrite a column; which config's metrics a run sees; profiles naming custom metrics
# ---------------------------------------------------------------------------


def _entry(name: str) -> dict:
    return {"name": name, "criteria": "x", "inputs": ["answer"], "scale": [1, 5]}


@pytest.mark.parametrize("name,message", [
    ("answer", "custom_metrics[0].name: 'answer' is a column every run reads or writes"),
    ("id", "custom_metrics[0].name: 'id' is a column every run reads or writes"),
    ("abstained_reason", "custom_metrics[0].name: 'abstained_reason' is a column every run reads or writes"),
    ("verdict_rule", "custom_metrics[0].name: 'verdict_rule' is a column every run reads or writes"),
    ("error", "custom_metrics[0].name: 'error' is a column every run reads or writes"),
    ("faithfulness_details", "custom_metrics[0].name: 'faithfulness_details' would write column(s) "
                             "['faithfulness_details'], which metric 'faithfulness' writes too"),
    ("hallucination_supported", "custom_metrics[0].name: 'hallucination_supported' would write column(s) "
                                "['hallucination_supported'], which metric 'hallucination' writes too"),
    ("factual_accuracy_grade", "which metric 'factual_accuracy' writes too"),
])
def test_a_custom_metric_may_not_take_a_column_name(tmp_path, name, message):
    import yaml

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"custom_metrics": [_entry(name)]}), encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        as_config(str(path))
    assert str(e.value).startswith(f"{path}: ") and message in str(e.value)
    assert name not in REGISTRY or REGISTRY[name].family != "custom"


@pytest.mark.parametrize("name,message", [
    ("answer", "register_metric: name: 'answer' is a column every run reads or writes"),
    ("question_type", "register_metric: name: 'question_type' is a column every run reads or writes"),
    ("answer_language", "register_metric: name: 'answer_language' is a column every run reads or writes"),
    ("relevance_details", "register_metric: name: 'relevance_details' would write column(s) ['relevance_details']"),
])
def test_register_metric_may_not_take_a_column_name(name, message):
    with pytest.raises(ValueError) as e:
        evalkit.register_metric(name, lambda answer: 1.0, better="higher", range=(0, 1))
    assert message in str(e.value) and name not in evalkit.metrics.custom.registered()


def test_a_registered_metric_may_not_write_another_registered_metrics_columns():
    evalkit.register_metric("mine", lambda answer: 1.0, better="higher", range=(0, 1))
    with pytest.raises(ValueError, match="'mine_details' would write column"):
        evalkit.register_metric("mine_details", lambda answer: 1.0, better="higher", range=(0, 1))


def test_reserved_names_cover_every_fixed_output_and_canonical_column():
    from evalkit.base.config import reserved_columns
    from evalkit.base.data import CANONICAL_COLUMNS
    from evalkit.run.runner import FIXED_OUTPUT_COLUMNS

    assert set(FIXED_OUTPUT_COLUMNS) | set(CANONICAL_COLUMNS) <= reserved_columns()


def test_a_later_run_without_the_config_no_longer_sees_its_metrics(tmp_path):
    seen = []
    evalkit.register_metric("probe", lambda answer: seen.append("conciseness" in REGISTRY) or 1.0,
                            better="higher", range=(0, 1))  # a Python registration: stays for the process
    with ScriptedJudgeServer(replies=REPLIES) as srv:
        first = evalkit.evaluate(_frame(), ["conciseness", "probe"], _config(tmp_path, srv.url), progress=False)
    assert first["conciseness"].tolist() == [5.0, 2.0, 4.0, 1.0] and set(seen) == {True}
    assert "conciseness" in REGISTRY  # still known after its run: evalkit.summary(first) reads it
    seen.clear()
    second = evalkit.evaluate(_frame(), ["probe"], {}, progress=False)
    assert seen and set(seen) == {False}  # not during the second run
    assert "conciseness" not in REGISTRY and "conciseness" not in second.columns  # nor after it
    assert "probe" in REGISTRY
    with pytest.raises(Exception, match="conciseness"):
        evalkit.evaluate(_frame(), ["conciseness"], None, progress=False)


def test_a_threshold_profile_may_name_the_configs_custom_metric(tmp_path, capsys):
    from evalkit.cli import main

    data = tmp_path / "d.csv"
    _frame().to_csv(data, index=False)
    prof = tmp_path / "prof.yaml"
    prof.write_text("metrics:\n  conciseness: {threshold: 3, flag: below, inclusive: false}\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    with ScriptedJudgeServer(replies=REPLIES) as srv:
        cfg = _config(tmp_path, srv.url)
        assert main(["score", str(data), "--config", cfg, "--thresholds", str(prof), "--metrics", "conciseness",
                     "-o", str(out), "-q"]) == 0, capsys.readouterr().err
    got = pd.read_csv(out)
    assert got["conciseness"].tolist() == [5.0, 2.0, 4.0, 1.0]
    assert "+profile:" in capsys.readouterr().out  # the profile is applied: its hash is in the signature


def test_better_is_the_registry_word_and_direction_its_old_name():
    """#41: the registry says which end is ``better``; a rule says which side it ``flag``s. Code and configs written
    with the registry's old word ``direction`` keep working, and say the same thing."""
    from evalkit.base.config import CustomMetricSpec

    with scoped():
        new = evalkit.register_metric("short_a", lambda answer: 0.5, better="lower", range=(0, 1))
        old = evalkit.register_metric("short_b", lambda answer: 0.5, direction="lower", range=(0, 1))
        assert new.better == old.better == old.direction == "lower"
        with pytest.raises(ValueError, match="disagree"):
            evalkit.register_metric("short_c", lambda answer: 0.5, better="higher", direction="lower", range=(0, 1))
        with pytest.raises(ValueError, match="better must be 'higher', 'lower' or 'none'"):
            evalkit.register_metric("short_d", lambda answer: 0.5, range=(0, 1))
    entry = {"name": "tone", "criteria": "Polite?", "inputs": ["answer"], "scale": [1, 5]}
    spec = CustomMetricSpec.parse({**entry, "better": "lower"}, "cfg")
    assert spec.better == CustomMetricSpec.parse({**entry, "direction": "lower"}, "cfg").better == "lower"
    assert spec.as_dict()["better"] == "lower" and "direction" not in spec.as_dict()
    assert REGISTRY["hallucination"].better == "lower" and REGISTRY["relevance"].better == "higher"


def test_two_runs_with_different_custom_metrics_in_two_threads_both_get_theirs(tmp_path):
    """#41: a config's custom metrics belong to its run. Two threads each activate their own config, wait for the
    other (so both definitions exist at once), then check and score theirs; the main thread, which loaded no
    config, sees neither, and a results file read in one thread is not seen by another. With one process-wide
    table the second activation dropped the first thread's metric."""
    import threading

    from evalkit.metrics.custom import activate_from

    both_active = threading.Barrier(2, timeout=60)
    seen: dict[str, object] = {}

    def run(name: str, folder) -> None:
        try:
            folder.mkdir()
            path = folder / "cfg.yaml"
            path.write_text(YAML.replace("name: conciseness", f"name: {name}")
                            + f"judge:\n  base_url: {srv.url}\n  model: scripted\n  cache_path: null\n")
            config = as_config(str(path))
            both_active.wait()
            other = "brevity" if name == "conciseness" else "conciseness"
            seen[name] = (name in REGISTRY, other in REGISTRY,
                          evalkit.evaluate(_frame(), [name], config, progress=False))
        except Exception as e:  # reported by the main thread
            seen[name] = e

    with ScriptedJudgeServer(replies=REPLIES) as srv:
        threads = [threading.Thread(target=run, args=(n, tmp_path / n)) for n in ("conciseness", "brevity")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
    for name in ("conciseness", "brevity"):
        assert not isinstance(seen[name], Exception), seen[name]
        mine, theirs, out = seen[name]
        assert mine and not theirs, name
        assert out[name].tolist() == [5.0, 2.0, 4.0, 1.0] and out["error"].isna().all()
    assert "conciseness" not in REGISTRY and "brevity" not in REGISTRY  # this thread loaded no config
    activate_from(seen["brevity"][2])  # reading results: this thread now reads brevity like any metric ...
    assert REGISTRY["brevity"].family == "custom"
    elsewhere: list[bool] = []
    reader = threading.Thread(target=lambda: elsewhere.append("brevity" in REGISTRY))
    reader.start()
    reader.join(60)
    assert elsewhere == [False]  # ... and no other thread does
