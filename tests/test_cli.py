import json

import pandas as pd
import pytest

from evalkit.cli import main


def test_score_sample_to_parquet(tmp_path, sample_path, capsys):
    out = tmp_path / "out.parquet"
    assert main(["score", str(sample_path), "-o", str(out), "--metrics", "relevance,exact_match", "-q"]) == 0
    df = pd.read_parquet(out)
    assert len(df) == 84 and {"relevance", "exact_match", "error"} <= set(df.columns)
    stdout = capsys.readouterr().out
    assert "scored 84 rows" in stdout and "evalkit:0.1.0|" in stdout


def test_score_formats_from_extension(tmp_path, sample_path):
    for ext in ("csv", "jsonl"):
        out = tmp_path / f"out.{ext}"
        assert main(["score", str(sample_path), "-o", str(out), "--metrics", "dont_know", "-q"]) == 0
        assert out.stat().st_size > 0


def test_missing_answer_fails_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "Q?", "contexts": []}) + "\n")
    assert main(["score", str(bad), "-o", str(tmp_path / "o.parquet")]) == 2
    err = capsys.readouterr().err.strip()
    assert "'answer'" in err and err.count("\n") == 0 and err.startswith("evalkit: error:")


def test_unknown_metric(tmp_path, sample_path, capsys):
    assert main(["score", str(sample_path), "-o", str(tmp_path / "o.parquet"), "--metrics", "nope"]) == 2
    assert "unknown metric 'nope'" in capsys.readouterr().err


def test_metrics_lists_registry(capsys):
    from evalkit.metrics import REGISTRY

    assert main(["metrics", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in listed] == list(REGISTRY)


def test_config_unknown_key(tmp_path, sample_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("spacy_modle: x\n")
    assert main(["score", str(sample_path), "-o", str(tmp_path / "o.parquet"), "--config", str(cfg)]) == 2
    assert "unknown key ['spacy_modle']" in capsys.readouterr().err


def test_calibrate_cli_writes_profile_used_by_score(tmp_path, sample_path, capsys):
    res = tmp_path / "res.parquet"
    assert main(["score", str(sample_path), "-o", str(res), "-q", "--metrics", "relevance,completeness,hallucination"]) == 0
    prof, js = tmp_path / "profile.yaml", tmp_path / "cal.json"
    capsys.readouterr()
    assert main(["calibrate", str(res), "--score", "hallucination", "--label", "hallucinated", "--criterion", "f1",
                 "--resamples", "100", "--by", "question_type", "-o", str(prof), "--json", str(js)]) == 0
    printed = capsys.readouterr().out
    out = json.loads(js.read_text())
    assert printed.startswith(f"hallucination vs hallucinated: n={out['n_used']} used")
    assert "protocol: threshold chosen and reported on the same rows (optimistic)" in printed
    from sklearn.metrics import roc_auc_score

    scored = pd.read_parquet(res).dropna(subset=["hallucination"])
    expected_auc = roc_auc_score(scored["hallucinated"].astype(bool), scored["hallucination"].astype(float))
    assert out["criterion"] == "f1" and out["roc_auc"]["estimate"] == pytest.approx(expected_auc, abs=1e-9)
    assert out["subgroups"]
    out2 = tmp_path / "res2.parquet"
    assert main(["score", str(sample_path), "-o", str(out2), "-q", "--thresholds", str(prof), "--profile", "seed",
                 "--metrics", "relevance,completeness,hallucination"]) == 0
    assert "th:c0.6,h" + f"{out['threshold']:g}" in capsys.readouterr().out
    # the profile's rule counts exactly the rows calibration counted as flagged (same rows, same rule)
    v = pd.read_parquet(out2)
    flagged = v["verdict"].eq("FAIL") & v["verdict_rule"].str.startswith("hallucination")
    at = out["at_threshold"]
    assert int(flagged.sum()) == at["tp"]["estimate"] + at["fp"]["estimate"]
    assert int((flagged & v["hallucinated"]).sum()) == at["tp"]["estimate"]


def _table(tmp_path, name, **cols):
    p = tmp_path / name
    pd.DataFrame(cols).to_csv(p, index=False)
    return str(p)


def test_calibrate_any_table_with_positive_value(tmp_path, capsys):
    # a table with only a score and a label; by hand: "yes" rows score 0.7..0.9, "no" rows 0.1..0.35 -> AUC 1,
    # youden threshold 0.7 (the lowest positive), precision 1, recall 1
    t = _table(tmp_path, "t.csv", s=[0.1, 0.2, 0.35, 0.8, 0.9, 0.7, None], judged=["no", "no", "no", "yes", "YES", "yes", "no"])
    assert main(["calibrate", t, "--score", "s", "--label", "judged", "--positive", "yes", "--resamples", "50",
                 "--min-per-class", "3"]) == 0
    out = capsys.readouterr().out
    assert "n=6 used (3 positive), 1 excluded (score or label missing)" in out
    assert "ROC AUC 1.000" in out and "flag >= 0.7," in out and "precision 1.000" in out


def test_calibrate_refuses_what_is_not_a_binary_label(tmp_path, capsys):
    cont = _table(tmp_path, "c.csv", s=[0.1, 0.5, 0.9], y=[0.2, 0.7, 0.95])
    assert main(["calibrate", cont, "--score", "s", "--label", "y"]) == 2
    assert "column 'y' is not a binary label: values seen 0.2, 0.7, 0.95" in capsys.readouterr().err
    three = _table(tmp_path, "3.csv", s=[0.1, 0.5, 0.9], y=["a", "b", "c"])
    assert main(["calibrate", three, "--score", "s", "--label", "y", "--positive", "a"]) == 2
    assert "column 'y' has 3 classes ('a', 'b', 'c')" in capsys.readouterr().err
    yn = _table(tmp_path, "yn.csv", s=[0.1, 0.5, 0.9], y=["yes", "no", "yes"])
    assert main(["calibrate", yn, "--score", "s", "--label", "y"]) == 2  # strings need --positive
    assert "use booleans or 0/1, or name the positive value (--positive VALUE)" in capsys.readouterr().err


def test_calibrate_one_line_errors(tmp_path, capsys):
    nan = _table(tmp_path, "n.csv", s=[None, None, None], y=[0, 1, 0])
    assert main(["calibrate", nan, "--score", "s", "--label", "y"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "column 's' has no values (3 rows, all missing)" in err
    one = _table(tmp_path, "o.csv", s=[0.1, 0.2, 0.3], y=[1, 1, 1])
    assert main(["calibrate", one, "--score", "s", "--label", "y"]) == 2
    assert "single class" in capsys.readouterr().err
    ok = _table(tmp_path, "k.csv", s=[0.1, 0.2, 0.8, 0.9], y=[0, 0, 1, 1])
    assert main(["calibrate", ok, "--score", "s", "--label", "y", "--by", "question_type"]) == 2
    assert "no column 'question_type' for --by" in capsys.readouterr().err
    assert main(["calibrate", ok, "--score", "nope", "--label", "y"]) == 2
    assert "no column 'nope'" in capsys.readouterr().err


def test_compare_cli(tmp_path, sample_path, capsys):
    res = tmp_path / "res.parquet"
    main(["score", str(sample_path), "-o", str(res), "-q", "--metrics", "hallucination,relevance"])
    capsys.readouterr()
    assert main(["compare", str(res), "--a", "rag-a", "--b", "rag-b", "--binary", "correct", "--resamples", "100",
                 "-o", str(tmp_path / "cmp.csv")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rag-b minus rag-a, paired on 'id'") and "p_holm" in out
    t = pd.read_csv(tmp_path / "cmp.csv").set_index("metric")
    assert t.loc["hallucination", "n_pairs"] == 42 and not t.loc["hallucination", "small"]


def test_compare_pairs_on_question_text_without_ids(tmp_path, capsys):
    # two systems, three questions, no id column: paired by the question text
    q = ["Q1?", "Q2?", "Q3?"]
    t = _table(tmp_path, "t.csv", question=q + q, system=["a"] * 3 + ["b"] * 3, score=[0.2, 0.4, 0.6, 0.5, 0.7, 0.9])
    out = tmp_path / "o.csv"
    assert main(["compare", t, "--a", "a", "--b", "b", "--metrics", "score", "--resamples", "100", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    row = pd.read_csv(out).iloc[0]
    assert row["n_pairs"] == 3 and row["diff"] == pytest.approx(0.3) and bool(row["small"])
    assert "paired on 'question'" in printed and "fewer than 10 pairs" in printed
    # asked to pair on a column that pairs nothing: an error that says how rows are paired
    t2 = _table(tmp_path, "t2.csv", id=["x1", "x2", "x3", "y1", "y2", "y3"], system=["a"] * 3 + ["b"] * 3,
                score=[0.2, 0.4, 0.6, 0.5, 0.7, 0.9])
    assert main(["compare", t2, "--a", "a", "--b", "b", "--metrics", "score"]) == 2
    assert "no pairs: rows are paired by 'id'" in capsys.readouterr().err


def test_compare_latex_and_markdown(tmp_path, capsys):
    q = [f"Q{i}?" for i in range(12)]
    t = _table(tmp_path, "t.csv", question=q + q, system=["a"] * 12 + ["b"] * 12, score=list(range(12)) + list(range(1, 13)))
    assert main(["compare", t, "--a", "a", "--b", "b", "--metrics", "score", "--format", "latex", "--resamples", "50"]) == 0
    assert "\\begin{tabular}" in capsys.readouterr().out
    assert main(["compare", t, "--a", "a", "--b", "b", "--metrics", "score", "--format", "markdown", "--resamples", "50"]) == 0
    assert "| metric" in capsys.readouterr().out


def test_every_subcommand_has_help_with_examples_and_defaults():
    from evalkit.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "cmd")
    for name, p in sub.choices.items():
        text = p.format_help()
        assert "examples:\n  evalkit " + name in text, name
        for action in p._actions:
            assert action.help, f"{name} {action.dest} has no help"
    assert "(default: 1000)" in sub.choices["calibrate"].format_help()


def test_help_states_each_default_once():
    """An option's help says its default once: never "(EVALKIT_JUDGE_CONCURRENCY; 4) (default: None)", never a
    "(default: None)" or "(default: )" for an option that has no default."""
    import re

    from evalkit.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "cmd")
    for name, p in sub.choices.items():
        formatter = p._get_formatter()
        for action in p._actions:
            if not action.help:
                continue
            text = formatter._expand_help(action)
            assert text.count("(default") + text.count("; default") <= 1, (name, text)
            assert "EVALKIT_" not in text or "(default:" not in text, (name, text)
            assert "(default: None)" not in text and "(default: )" not in text and "(default: False)" not in text
    compare = sub.choices["compare"].format_help()
    assert re.search(r"--seed SEED\s+seed of the bootstrap \(default: 0\)", compare)  # a 0 default is still said


def test_score_with_judge_from_environment(tmp_path, sample_path, capsys, monkeypatch, judge_server):
    monkeypatch.setenv("EVALKIT_JUDGE_BASE_URL", judge_server.url)
    monkeypatch.setenv("EVALKIT_JUDGE_MODEL", "scripted")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"judge:\n  cache_path: {tmp_path / 'cache.sqlite'}\n")
    args = ["score", str(sample_path), "-o", str(tmp_path / "o.parquet"), "--metrics", "faithfulness,answer_class",
            "--config", str(cfg), "-q"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "judge faithfulness:" in out and "judge:openai-chat:scripted@t0,rf=json_schema+prompts:" in out
    n = judge_server.requests
    assert main(args) == 0  # cached: zero HTTP calls
    assert judge_server.requests == n and " 0 HTTP calls" in capsys.readouterr().out


def test_summary_formats_with_intervals_and_counts(tmp_path, capsys):
    # system b's relevance is constant 0.6: its interval is exactly [0.600, 0.600]; a's mean is (0.2 + 0.4) / 2
    t = _table(tmp_path, "r.csv", system=["a", "a", "a", "b", "b"], relevance=[0.2, 0.4, None, 0.6, 0.6],
               error=[None, None, "relevance: ValueError: boom", None, None])
    assert main(["summary", t, "--format", "markdown", "--resamples", "200"]) == 0
    out = capsys.readouterr().out
    # one row per metric and system (evalkit.publish.tables): metric | system | mean [95% CI] | n (undet., err.)
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()
            if line.startswith("| relevance (0..1, higher is better)")]
    assert rows[0][1] == "a" and rows[0][2].startswith("0.300 [") and rows[0][3] == "3 (0, 1)"  # 1 error
    assert rows[1][1:] == ["b", "0.600 [0.600, 0.600]", "2 (0, 0)"]
    assert main(["summary", t, "--format", "latex", "--resamples", "50"]) == 0
    assert "\\begin{tabular}" in capsys.readouterr().out
    assert main(["summary", t, "--by", "nope"]) == 2
    assert "--by names absent column(s) ['nope']" in capsys.readouterr().err


def test_summary_shows_the_corpus_value_beside_the_mean(tmp_path, capsys):
    # keyword counts 1/1 and 1/4: the row mean is (1 + 0.25) / 2 = 0.625, the corpus value (1 + 1) / (1 + 4) = 0.4
    t = _table(tmp_path, "r.csv", completeness=[1.0, 0.25], completeness_matched=[1, 1], completeness_expected=[1, 4])
    assert main(["summary", t, "--format", "markdown", "--resamples", "0"]) == 0
    out = capsys.readouterr().out
    assert "micro [95% CI]" in out
    row = next(line for line in out.splitlines() if line.startswith("| completeness (0..1, higher is better)"))
    assert [c.strip() for c in row.strip("|").split("|")][1:] == ["0.625", "0.400", "2 (0, 0)"]


def test_summary_adds_judge_variance_when_the_judge_was_asked_repeatedly(tmp_path, capsys):
    import json as _json

    # three answers, each judged twice: row means 90, 50, 0 -> mean 140 / 3; only the first row disagrees with itself
    t = _table(tmp_path, "r.csv", faithfulness=[90.0, 50.0, 0.0],
               faithfulness_details=[_json.dumps({"repeats": r}) for r in ([80.0, 100.0], [50.0, 50.0], [0.0, 0.0])])
    assert main(["summary", t, "--format", "text", "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    assert "judge variance" in out
    row = next(line for line in out.splitlines() if line.startswith("faithfulness") and "46.6667" in line)
    assert row.split()[1:3] == ["3", "0"]  # rows, undetermined rows
    plain = _table(tmp_path, "p.csv", faithfulness=[90.0], faithfulness_details=['{"claims": []}'])
    assert main(["summary", plain, "--resamples", "0"]) == 0
    assert "judge variance" not in capsys.readouterr().out


def test_calibrate_wrong_positive_class_warns_first_and_refuses_the_profile(tmp_path, capsys):
    # by hand: N (unfaithful) rows score 0.4, 0.7, 0.8, Y rows 0.1, 0.2, 0.3, 0.6 -> with Y positive AUC = 1/12, and
    # the only Youden maximum (J = 0) is the loosest threshold 0.1, which flags all 7 rows
    t = _table(tmp_path, "t.csv", s=[0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8], faithful=["Y", "Y", "Y", "N", "Y", "N", "N"])
    prof = tmp_path / "p.yaml"
    args = ["calibrate", t, "--score", "s", "--label", "faithful", "--positive", "Y", "--resamples", "50", "-o", str(prof),
            "--min-per-class", "3"]
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out.splitlines()[0].startswith("warning: the score ranks your positive class lower (ROC AUC 0.083): "
                                          "is --positive the bad-answer class? (flagged = positive")
    assert err.count("\n") == 1 and err.startswith("evalkit: error: not writing") and "--force" in err
    assert "flags all of the 7 rows" in err and not prof.exists()
    assert main(args + ["--force"]) == 0 and prof.exists()
    capsys.readouterr()
    assert main(["calibrate", t, "--score", "s", "--label", "faithful", "--positive", "N", "--resamples", "50",
                 "-o", str(prof), "--min-per-class", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("s vs faithful: n=7 used (3 positive)") and "flag >= 0.4," in out and "warning" not in out
    import yaml

    assert yaml.safe_load(prof.read_text())["metrics"]["s"]["positive"] == "N"


def test_calibrate_likert_comparison_matches_hand_mapped_binary(tmp_path, capsys):
    t = _table(tmp_path, "t.csv", s=[0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8], likert=[5, 4, 3, 2, 4, 1, 2],
               bad=[0, 0, 0, 1, 0, 1, 1])
    js1, js2 = tmp_path / "1.json", tmp_path / "2.json"
    assert main(["calibrate", t, "--score", "s", "--label", "likert", "--positive", "<=2", "--resamples", "50",
                 "--json", str(js1), "--min-per-class", "3"]) == 0
    assert main(["calibrate", t, "--score", "s", "--label", "bad", "--resamples", "50", "--json", str(js2),
                 "--min-per-class", "3"]) == 0
    a, b = json.loads(js1.read_text()), json.loads(js2.read_text())
    for d in (a, b):
        d.pop("label"), d.pop("positive")
    assert a == b and a["threshold"] == 0.4 and a["roc_auc"]["estimate"] == pytest.approx(11 / 12)


@pytest.mark.parametrize("column,values,line", [
    ("faithful", ["Y", "N", "Y", "N"], 'positive: "N"'),
    ("hallucinated", ["yes", "no", "no", "yes"], 'positive: "yes"'),
    ("verdict_human", ["pass", "fail", "pass", "pass"], 'positive: "fail"'),
    ("correct", [True, False, True, True], "positive: false"),
    ("likert", [1, 3, 5, 4], 'positive: "<=2"'),
])
def test_init_recognises_label_columns_and_writes_the_positive_class(tmp_path, capsys, column, values, line):
    from evalkit.publish.experiment import load_experiment

    t = _table(tmp_path, "d.csv", question=["a?", "b?", "c?", "d?"], answer=["A.", "B.", "C.", "D."],
               contexts=["x", "y", "z", "w"], **{column: values})
    exp = tmp_path / "e.yaml"
    assert main(["init", t, "-o", str(exp)]) == 0
    text = exp.read_text()
    written = next(s for s in text.splitlines() if s.strip().startswith("positive:"))
    assert f"label: {column}" in text and written.strip().startswith(line) and "# flagged = " in written
    cal = load_experiment(exp).calibration
    assert cal["label"] == column
    from evalkit.decide.calibrate import binary_labels

    flagged = binary_labels(values, positive=cal["positive"], column=column)
    # the bad answers by hand: N, yes, fail, False, scores 1-2
    assert flagged == {"faithful": [False, True, False, True], "hallucinated": [True, False, False, True],
                       "verdict_human": [False, True, False, False], "correct": [False, True, False, False],
                       "likert": [True, False, False, False]}[column]


def test_compare_binary_with_positive(tmp_path, capsys):
    # by hand: a says Y on 3 of 6, b on 5 of 6; b alone says Y on q2 and q3 -> only_b 2, only_a 0, McNemar p = 0.5
    t = _table(tmp_path, "c.csv", id=[f"q{i}" for i in range(6)] * 2, system=["a"] * 6 + ["b"] * 6,
               ok=list("YYNNYN") + list("YYYYYN"), s=[0.5] * 12)
    out = tmp_path / "cmp.csv"
    assert main(["compare", t, "--a", "a", "--b", "b", "--binary", "ok", "--positive", "Y", "--metrics", "s",
                 "--resamples", "50", "-o", str(out)]) == 0
    r = pd.read_csv(out).set_index("metric").loc["ok"]
    assert (r["mean_a"], r["mean_b"], r["only_a"], r["only_b"]) == (0.5, pytest.approx(5 / 6), 0, 2)
    assert r["p_mcnemar"] == pytest.approx(0.5)
    assert main(["compare", t, "--a", "a", "--b", "b", "--binary", "ok", "--metrics", "s"]) == 2
    assert "column 'ok' is not a binary label" in capsys.readouterr().err


def test_the_venvs_evalkit_script_runs():
    """The README's `.venv/bin/evalkit ...`: the console script sits beside the environment's python and runs."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(sys.executable).with_name("evalkit")
    assert script.exists(), f"no console script at {script}: pip install -e . installs it"
    r = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("evalkit ")
