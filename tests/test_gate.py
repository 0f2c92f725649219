"""#29 item 5: `evalkit check` (evalkit/decide/gate.py) gates a CI on results; `aevaluate` awaits a run in a running loop."""
import asyncio
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.cli import main
from evalkit.decide.gate import check
from evalkit.testing import ScriptedJudgeServer
from evalkit.base.thresholds import Threshold

# system a: faithfulness 90, 80 (mean 85); system b: 40, 60 (mean 50); hand-made, no scoring needed
RESULTS = pd.DataFrame({"id": ["q1", "q2", "q1", "q2"], "system": ["a", "a", "b", "b"],
                        "faithfulness": [90.0, 80.0, 40.0, 60.0], "hallucination": [0.1, 0.2, 0.7, 0.2],
                        "relevance": [0.9, 0.8, 0.9, 0.9], "completeness": [1.0, 1.0, 1.0, 1.0]})
PROFILE = "metrics:\n  faithfulness: {threshold: 70, flag: below, inclusive: false}\n"


def test_check_by_hand():
    rule = Threshold("faithfulness", 70.0, flag="below", inclusive=False)
    res = check(RESULTS, [rule], n_resamples=200)
    assert [(c.system, c.value, c.passed) for c in res.checks] == [("a", 85.0, True), ("b", 50.0, False)]
    b = res.failing[0]
    assert b.low <= 50.0 <= b.high and b.n == 2 and b.rule == "mean faithfulness must not be < 70"
    # the rule's own comparison: a mean exactly on a non-inclusive cut passes, on an inclusive one fails
    assert check(RESULTS, [Threshold("faithfulness", 50.0, flag="below", inclusive=False)]).passed
    assert not check(RESULTS, [Threshold("faithfulness", 50.0, flag="below", inclusive=True)]).passed
    # a system without a determined value fails: nothing shows it meets the rule
    none_b = RESULTS.assign(faithfulness=[90.0, 80.0, None, None])
    assert [c.passed for c in check(none_b, [rule]).checks] == [True, False]
    with pytest.raises(ValueError, match=r"the rules name \['context_recall'\]"):
        check(RESULTS, [Threshold("context_recall", 50.0, flag="below")])


def test_check_fail_share_by_hand():
    df = RESULTS.assign(verdict=["PASS", "PASS", "FAIL", "PASS"])
    res = check(df, [], max_fail_share=0.25)
    assert [(c.system, c.value, c.passed) for c in res.checks] == [("a", 0.0, True), ("b", 0.5, False)]


@pytest.fixture()
def files(tmp_path):
    results = tmp_path / "results.parquet"
    RESULTS.to_parquet(results)
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE)
    return results, profile, tmp_path


def test_cli_check_exit_codes(files, capsys):
    results, profile, tmp = files
    assert main(["check", str(results), "--thresholds", str(profile), "--resamples", "200"]) == 1
    out = capsys.readouterr().out
    assert "check failed: 1 of 2 rule(s) over 2 system(s)" in out
    assert "mean faithfulness must not be < 70" in out and "50 [" in out and "FAIL" in out
    assert "\na " not in out  # only the failing rows are listed
    lenient = tmp / "lenient.yaml"
    lenient.write_text("metrics:\n  faithfulness: {threshold: 40, flag: below, inclusive: false}\n")
    assert main(["check", str(results), "--thresholds", str(lenient)]) == 0
    assert "check passed: 2 rule(s) over 2 system(s)" in capsys.readouterr().out
    # the verdict under the profile: b's q1 has hallucination 0.7 > 0.5 -> FAIL; share 0.5 > 0.25
    assert main(["check", str(results), "--thresholds", str(lenient), "--max-fail-share", "0.25"]) == 1
    assert "share of FAIL verdicts must not be > 0.25" in capsys.readouterr().out
    assert main(["check", str(results), "--thresholds", str(lenient), "--max-fail-share", "0.5"]) == 0


@pytest.mark.parametrize("argv,says", [
    (["--thresholds", "nope.yaml"], "no such threshold profile"),
    ([], "give --thresholds"),
    (["--thresholds", "{profile}", "--by", "team"], "no 'team' column"),
    (["--max-fail-share", "1.5"], "max_fail_share must be in 0..1"),
])
def test_cli_check_bad_input_exits_2(files, capsys, argv, says):
    results, profile, _ = files
    argv = [a.replace("{profile}", str(profile)) for a in argv]
    assert main(["check", str(results), *argv]) == 2
    assert says in capsys.readouterr().err


def test_cli_check_profile_naming_an_absent_metric_exits_2(files, capsys):
    results, _, tmp = files
    p = tmp / "p.yaml"
    p.write_text("metrics:\n  context_recall: {threshold: 50, flag: below, inclusive: false}\n")
    assert main(["check", str(results), "--thresholds", str(p)]) == 2
    assert "context_recall" in capsys.readouterr().err


def test_aevaluate_inside_a_running_loop_keeps_the_loop_free():
    df = evalkit.load(Path(__file__).resolve().parents[1] / "data" / "sample_rag.jsonl").head(6)

    async def notebook_cell(url):
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        t = asyncio.ensure_future(ticker())
        assert asyncio.get_running_loop().is_running()
        cfg = {"judge": {"base_url": url, "model": "scripted", "cache_path": None},
               "metric_params": {"answer_relevance": {"method": "rubric"}}}
        out = await evalkit.aevaluate(df, ["faithfulness", "answer_relevance"], cfg, progress=False)
        t.cancel()
        return out, ticks

    with ScriptedJudgeServer(latency=0.05) as srv:
        out, ticks = asyncio.run(notebook_cell(srv.url))
        calls = srv.requests
    assert out["error"].isna().all() and calls == 12
    # the loop kept running while the judge was called: a blocking call would let the ticker run 0 times before it
    # is cancelled (no count of ticks is asserted beyond that: it depends on the machine's load)
    assert ticks >= 1
    with ScriptedJudgeServer() as srv:  # the same numbers as the synchronous run
        cfg = {"judge": {"base_url": srv.url, "model": "scripted", "cache_path": None},
               "metric_params": {"answer_relevance": {"method": "rubric"}}}
        sync = evalkit.evaluate(df, ["faithfulness", "answer_relevance"], cfg, progress=False)
    pd.testing.assert_frame_equal(out[["faithfulness", "answer_relevance"]], sync[["faithfulness", "answer_relevance"]])


def test_check_table_keeps_columns_apart_whatever_the_rule_length():
    """A rule longer than any fixed column width (the issue's `must not be >= 0.1666670.3222 [...]`) still has two
    spaces between it and its value; every line splits into the same five cells."""
    import re

    from evalkit.decide.gate import CheckResult, RuleCheck

    long_rule = "mean answer_relevance_with_a_long_custom_name must not be >= 0.166667"
    checks = (RuleCheck("rag-b", long_rule, 0.3222, 0.1778, 0.4806, 42, False),
              RuleCheck("a-system-with-a-long-name", "mean relevance must not be < 0.1", None, None, None, 0, False))
    lines = CheckResult(checks).table().splitlines()
    assert [re.split(r"\s{2,}", line.strip()) for line in lines[2:]] == [
        ["rag-b", long_rule, "0.3222 [0.1778, 0.4806]", "42", "FAIL"],
        ["a-system-with-a-long-name", "mean relevance must not be < 0.1", "no value", "0", "FAIL"]]
    assert lines[0].split() == ["system", "rule", "value", "[95%", "interval]", "n", "result"]
