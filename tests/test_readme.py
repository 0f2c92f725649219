"""Every command the README shows is executed here (or, for the two `make` targets and the grounding
trainer, mapped to the exact test that runs it), so the README cannot drift from the kit."""
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from .onetruth import assert_one_truth

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# benchmark commands run at a smaller size than the README's (same script, same code path)
SMALL = {"bench_triad_speed.py": ["--rows", "40"], "bench_validity.py": ["--limit", "40", "--resamples", "20"],
         "bench_judge.py": ["--rows", "8", "--latency", "0"], "bench_grounding_speed.py": ["--qa", "20", "--summaries", "5"],
         "bench_estimates.py": ["--rows", "120", "--seeds", "2", "--labels", "20,40", "--tasks", "halueval_qa",
                                "--out"]}
# benchmark scripts that read ../shared/bench (development data that is never copied into the project)
NEEDS_SHARED = {"bench_validity.py", "bench_grounding_speed.py", "bench_estimates.py"}
# commands another test executes in full: command -> where
ELSEWHERE = {
    "make report": "the Makefile's report target is `evalkit report experiments/default.yaml`, run below",
    "make test": ".ci/run runs it on every submission",
    "train_grounding.py": "tests/metrics/test_grounding.py::test_training_script_reproduces_the_shipped_model "
                          "(pytest -m slow: the trainer takes minutes)",
}


def readme_commands() -> list[str]:
    """Each command line of the README's bash blocks, comments stripped."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", README, flags=re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line:
                out.append(line)
    return out


def test_every_readme_command_is_accounted_for():
    for cmd in readme_commands():
        assert (cmd.startswith(("evalkit ", "export EVALKIT_JUDGE_")) or any(k in cmd for k in ELSEWHERE)
                or any(k in cmd for k in SMALL)), f"README command not executed by any test: {cmd}"
    make = (ROOT / "Makefile").read_text()
    assert "$(BIN)/evalkit report experiments/default.yaml" in make


def _my_answers(path: Path) -> None:
    """A user's own CSV for the README walk-through: two systems, labels, ragas-free canonical names."""
    qs = [("What year did the Harlow bridge open?", "The Harlow bridge opened in 1932 after four years of work.",
           "The Harlow bridge opened in 1932.", "It opened in 1932.", "1932 it opened."),
          ("How long is the Harlow bridge?", "The bridge spans 412 metres across the Wend estuary.",
           "It is about 500 metres long.", "412 metres", "It is 412 metres long."),
          ("How many beds does the Oakfield clinic have?", "The Oakfield clinic has 48 beds and two theatres.",
           "The clinic has 84 beds.", "48 beds", "The clinic has 48 beds."),
          ("When does the Tarn ferry run?", "The Tarn ferry runs hourly from 6am to 10pm every day.",
           "The ferry runs hourly from 6am to 10pm.", "Hourly, 6am to 10pm", "Hourly from 6am to 10pm."),
          ("What does a single ferry ticket cost?", "A single ferry ticket costs 4.50 pounds; a return 8 pounds.",
           "A single ticket costs 9 pounds.", "4.50 pounds", "A single ticket costs 4.50 pounds."),
          ("Who designed the Harlow bridge?", "The Harlow bridge was designed by the engineer Ada Linnell.",
           "It was designed by Thomas Brunel.", "Ada Linnell", "The engineer Ada Linnell designed it."),
          ("How many theatres does the Oakfield clinic have?", "The Oakfield clinic has 48 beds and two theatres.",
           "It has five operating theatres.", "two", "It has two theatres."),
          ("What river does the Tarn ferry cross?", "The Tarn ferry crosses the river Wend near its mouth.",
           "The ferry crosses the river Tarn.", "the Wend", "It crosses the river Wend.")]
    rows = []
    for i, (q, c, base, gt, tuned) in enumerate(qs):
        wrong = base not in ("The Harlow bridge opened in 1932.", "The ferry runs hourly from 6am to 10pm.")
        rows.append({"id": f"k{i}", "system": "base", "question": q, "contexts": json.dumps([c]), "answer": base,
                     "ground_truth": gt, "hallucinated": wrong, "correct": not wrong})
        rows.append({"id": f"k{i}", "system": "tuned", "question": q, "contexts": json.dumps([c]), "answer": tuned,
                     "ground_truth": gt, "hallucinated": False, "correct": True})
    pd.DataFrame(rows).to_csv(path, index=False)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    ws = tmp_path_factory.mktemp("readme")
    for name in ("data", "experiments"):
        (ws / name).symlink_to(ROOT / name)
    _my_answers(ws / "my_answers.csv")
    _my_labels(ws / "my_answers.csv", ws / "labels.csv")
    _my_study(ws / "study.csv")
    return ws


def _my_study(path: Path) -> None:
    """A labelling study's table for the README's `evalkit estimate`: 300 questions answered by two systems, two
    scores on every row, the label `hallucinated` (yes/no) on a random 60 of the 600 rows."""
    import numpy as np

    rng = np.random.default_rng(4)
    frames = []
    for system, rate in (("base", 0.3), ("tuned", 0.15)):
        y = rng.random(300) < rate
        frames.append(pd.DataFrame({"id": [f"s{i}" for i in range(300)], "system": system,
                                    "hallucination": np.clip(0.5 * y + rng.normal(0.2, 0.2, 300), 0, 1),
                                    "support": np.clip(0.8 - 0.4 * y + rng.normal(0, 0.2, 300), 0, 1),
                                    "truth": np.where(y, "yes", "no")}))
    df = pd.concat(frames, ignore_index=True)
    picked = rng.choice(len(df), 60, replace=False)
    df["hallucinated"] = None
    df.loc[picked, "hallucinated"] = df.loc[picked, "truth"]
    df.drop(columns="truth").to_csv(path, index=False)
    # a calibration set for the README's `calibrate --guarantee`: 1,200 other answers, every one labelled
    y = rng.random(1200) < 0.2
    pd.DataFrame({"id": [f"c{i}" for i in range(1200)], "hallucination": np.clip(0.5 * y + rng.normal(0.2, 0.2, 1200),
                                                                                 0, 1),
                  "hallucinated": np.where(y, "yes", "no")}).to_csv(path.with_name("labelled.csv"), index=False)


def _my_labels(answers: Path, out: Path) -> None:
    """labels.csv as evalkit.labeler writes it for those answers (ids repeat across the two systems, so it has a
    system column): the README's `calibrate --labels` reads it."""
    from evalkit.decide.calibrate.active import labels_csv

    df = pd.read_csv(answers)
    out.write_text(labels_csv([{"id": r.id, "system": r.system, "label": "yes" if r.hallucinated else "no",
                                "labeller": "readme", "timestamp": "2026-11-26T00:00:00+00:00"}
                               for r in df.itertuples()]))


def _run(cmd: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    argv = shlex.split(cmd)
    if argv[0] == "evalkit":
        argv = [sys.executable, "-m", "evalkit.cli", *argv[1:]]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=1200)


def test_readme_evalkit_commands_run_in_order(workspace, judge_server):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg"}
    ran = []
    for cmd in readme_commands():
        if cmd.startswith("export "):  # the judge block: point it at the scripted judge server instead
            env.update({"EVALKIT_JUDGE_BASE_URL": judge_server.url, "EVALKIT_JUDGE_MODEL": "scripted",
                        "EVALKIT_JUDGE_API_KEY": "unused"})
            continue
        if not cmd.startswith("evalkit "):
            continue
        r = _run(cmd, workspace, env)
        assert r.returncode == 0, f"{cmd}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        ran.append(cmd)
    assert len(ran) >= 12
    assert (workspace / "reports" / "my_answers" / "report.html").exists()
    assert (workspace / "reports" / "default" / "report.html").exists()
    # one truth: the paper built from the default report prints the report's own numbers
    assert_one_truth(workspace / "reports" / "default", workspace / "paper")
    v = pd.read_parquet(workspace / "results_calibrated.parquet")
    assert {"verdict", "verdict_rule"} <= set(v.columns) and len(v) == 16


@pytest.mark.parametrize("script", sorted(SMALL))
def test_readme_benchmark_commands_run(script, tmp_path):
    line = next(c for c in readme_commands() if script in c)
    argv = shlex.split(line.split("&&", 1)[1])
    py, path = argv[0], argv[1]
    assert py == "../.venv/bin/python" and path == script
    extra = SMALL[script] + (["--out", str(tmp_path / "validity.md")] if script == "bench_validity.py" else [])
    if script == "bench_estimates.py":  # its --out takes the path given here, not the committed results
        extra = extra + [str(tmp_path / "estimates.md")]
    if script in NEEDS_SHARED and not (ROOT.parent / "shared" / "bench").exists():
        pytest.skip(f"{script} reads the development data in ../shared/bench, which is not beside this checkout")
    r = subprocess.run([sys.executable, path, *extra], cwd=ROOT / "benchmarks", capture_output=True, text=True,
                       timeout=1200, env={**os.environ, "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip()
