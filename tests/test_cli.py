import json

import pandas as pd

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
    assert main(["score", str(sample_path), "-o", str(res), "-q"]) == 0
    prof = tmp_path / "profile.yaml"
    capsys.readouterr()
    assert main(["calibrate", str(res), "--score", "hallucination", "--label", "hallucinated", "--criterion", "f1",
                 "--resamples", "100", "--by", "question_type", "-o", str(prof)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["criterion"] == "f1" and 0.5 < out["roc_auc"]["estimate"] <= 1 and out["subgroups"]
    out2 = tmp_path / "res2.parquet"
    assert main(["score", str(sample_path), "-o", str(out2), "-q", "--thresholds", str(prof)]) == 0
    assert "th:c0.6,h" + f"{out['threshold']:g}" in capsys.readouterr().out


def test_calibrate_cli_bad_column(tmp_path, sample_path, capsys):
    res = tmp_path / "res.parquet"
    main(["score", str(sample_path), "-o", str(res), "-q", "--metrics", "relevance"])
    assert main(["calibrate", str(res), "--score", "nope", "--label", "hallucinated"]) == 2
    assert "no column 'nope'" in capsys.readouterr().err


def test_compare_cli(tmp_path, sample_path, capsys):
    res = tmp_path / "res.parquet"
    main(["score", str(sample_path), "-o", str(res), "-q", "--metrics", "hallucination,relevance"])
    capsys.readouterr()
    assert main(["compare", str(res), "--a", "rag-a", "--b", "rag-b", "--binary", "correct", "--resamples", "100",
                 "-o", str(tmp_path / "cmp.csv")]) == 0
    assert "hallucination" in capsys.readouterr().out and (tmp_path / "cmp.csv").exists()


def test_score_with_judge_from_environment(tmp_path, sample_path, capsys, monkeypatch, judge_server):
    monkeypatch.setenv("EVALKIT_JUDGE_BASE_URL", judge_server.url)
    monkeypatch.setenv("EVALKIT_JUDGE_MODEL", "scripted")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"judge:\n  cache_path: {tmp_path / 'cache.sqlite'}\n")
    args = ["score", str(sample_path), "-o", str(tmp_path / "o.parquet"), "--metrics", "faithfulness,answer_class",
            "--config", str(cfg), "-q"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "judge faithfulness:" in out and "judge:openai-chat:scripted@t0+prompts:" in out
    n = judge_server.requests
    assert main(args) == 0  # cached: zero HTTP calls
    assert judge_server.requests == n and " 0 HTTP calls" in capsys.readouterr().out
