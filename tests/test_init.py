"""`evalkit init` (evalkit/publish/experiment.py: starter_experiment): the label it proposes is the column scoring keeps."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from evalkit.cli import main

CTX = "The base premium for Territory 118 is $604 per year. Territory 205 pays $512."
# a human 0/1 label named like evalkit's own hallucination score: 1 = the answer makes something up
ROWS = [("What is the premium for Territory 118?", "The base premium for Territory 118 is $604.", 0),
        ("What does Territory 205 pay?", "Territory 205 pays $512.", 0),
        ("What is the premium for Territory 118?", "Territory 118 pays $604 per year.", 0),
        ("What does Territory 205 pay?", "Territory 205 pays $512 per year.", 0),
        ("What is the premium for Territory 118?", "The premium is $950, due every March to Acme Insurance.", 1),
        ("What does Territory 205 pay?", "Territory 205 pays $1,200 after the 2019 flood surcharge.", 1),
        ("What is the premium for Territory 118?", "Roughly $77 monthly, according to Zurich underwriters.", 1),
        ("What does Territory 205 pay?", "It pays $388 since Hartford lowered rates.", 1)]


@pytest.fixture()
def labelled_csv(tmp_path):
    path = tmp_path / "answers.csv"
    pd.DataFrame({"question": [q for q, _, _ in ROWS], "contexts": [CTX] * len(ROWS),
                  "answer": [a for _, a, _ in ROWS], "hallucination": [y for _, _, y in ROWS]}).to_csv(path, index=False)
    return path


def test_a_label_named_like_an_output_is_proposed_under_the_name_scoring_keeps(tmp_path, labelled_csv, capsys):
    from evalkit.publish.experiment import load_experiment

    exp = tmp_path / "e.yaml"
    assert main(["init", str(labelled_csv), "-o", str(exp)]) == 0
    text = exp.read_text()
    # the default profile's first rule decides the verdict, so the starter calibrates its metric (a try-out found
    # `score: hallucination`, the seed profile's metric, under a report whose verdict never reads it)
    assert "  score: unsupported_facts\n" in text and "  label: input_hallucination " in text
    assert "# your column 'hallucination' has the name of an evalkit output; scoring keeps it as " \
           "input_hallucination" in text
    cal = load_experiment(exp).calibration
    assert (cal["score"], cal["label"], cal["positive"]) == ("unsupported_facts", "input_hallucination", 1)

    res = tmp_path / "res.parquet"
    assert main(["score", str(labelled_csv), "-o", str(res), "-q", "--metrics", "hallucination,unsupported_facts"]) == 0
    assert "kept as ['input_hallucination']" in capsys.readouterr().err
    scored = pd.read_parquet(res)
    assert scored["input_hallucination"].tolist() == [y for _, _, y in ROWS]  # the user's column, kept
    js = tmp_path / "cal.json"
    assert main(["calibrate", str(res), "--score", cal["score"], "--label", cal["label"], "--positive",
                 str(cal["positive"]), "--resamples", "50", "--json", str(js), "--min-per-class", "4"]) == 0
    out = json.loads(js.read_text())
    from sklearn.metrics import roc_auc_score

    used = scored.dropna(subset=["unsupported_facts"])
    assert out["n_used"] == len(used) == len(ROWS)
    assert out["roc_auc"]["estimate"] == pytest.approx(
        roc_auc_score(used["input_hallucination"] == 1, used["unsupported_facts"].astype(float)), abs=1e-9)


def test_a_label_with_its_own_name_is_proposed_as_is(tmp_path):
    path = tmp_path / "d.csv"
    pd.DataFrame({"question": ["a?", "b?"], "contexts": ["x", "y"], "answer": ["A.", "B."],
                  "hallucinated": [0, 1]}).to_csv(path, index=False)
    exp = tmp_path / "e.yaml"
    assert main(["init", str(path), "-o", str(exp)]) == 0
    text = exp.read_text()
    assert "  label: hallucinated " in text and "input_" not in text


def test_the_starter_calibrates_the_default_profiles_first_rule_the_data_can_feed():
    # the unsupported-facts rule reads contexts; without them the next rule is the reference check, which without a
    # ground_truth is 0 on every row (nothing to contradict), so the starter takes whether it answers the question,
    # which flags low values: a low score points at the positive label
    from evalkit.publish.experiment import starter_experiment

    df = pd.DataFrame({"question": ["Q?", "R?"], "answer": ["A.", "B."], "off_topic": [True, False]})
    text = starter_experiment(df, "/tmp/answers.csv", "/tmp/my.yaml")
    assert "  score: answers_question\n" in text
    assert "  direction: lower           # lower: a lower score points at the positive label" in text
    with_reference = starter_experiment(df.assign(ground_truth=["a", "b"]), "/tmp/answers.csv", "/tmp/my.yaml")
    assert "  score: reference_conflict\n" in with_reference and "  direction: higher " in with_reference
    with_contexts = starter_experiment(df.assign(contexts=["c", "d"]), "/tmp/answers.csv", "/tmp/my.yaml")
    assert "  score: unsupported_facts\n" in with_contexts and "  direction: higher " in with_contexts
    unlabelled = starter_experiment(df.drop(columns="off_topic").assign(contexts=["c", "d"]), "/tmp/answers.csv",
                                    "/tmp/my.yaml")
    assert "calibration: {score: unsupported_facts, label: hallucinated, split: seeded}" in unlabelled


def test_init_hints_the_command_lines_own_syntax(tmp_path, capsys):
    """A file without an `answer` column: the fix is said as the option a command-line user types."""
    data = tmp_path / "mine.csv"
    data.write_text("question,output\nQ?,A.\n")
    assert main(["init", str(data), "-o", str(tmp_path / "mine.yaml")]) == 2
    err = capsys.readouterr().err
    assert "--columns answer=YOUR_COLUMN on the command line" in err
    assert not (tmp_path / "mine.yaml").exists()


def test_the_starter_pairs_systems_on_a_column_both_have():
    """Ids that name the system ("q1-A", "q1-B") pair nothing: the starter pairs on `question_id` where the data
    has one, else on the question (a try-out's report said "no pairs" with `pair_on: id`)."""
    from evalkit.publish.experiment import starter_experiment

    df = pd.DataFrame({"id": ["q1-A", "q1-B", "q2-A", "q2-B"], "question_id": ["q1", "q1", "q2", "q2"],
                       "system": ["A", "B", "A", "B"], "question": ["Q1?", "Q1?", "Q2?", "Q2?"],
                       "answer": ["a", "b", "c", "d"]})
    assert "  pair_on: question_id\n" in starter_experiment(df, "/tmp/answers.csv", "/tmp/my.yaml")
    no_qid = starter_experiment(df.drop(columns="question_id"), "/tmp/answers.csv", "/tmp/my.yaml")
    assert "  pair_on: question\n" in no_qid
    same_ids = starter_experiment(df.assign(id=["q1", "q1", "q2", "q2"]), "/tmp/answers.csv", "/tmp/my.yaml")
    assert "  pair_on: id\n" in same_ids


def test_a_label_left_blank_on_some_jsonl_rows_is_a_label(tmp_path):
    """A JSONL label written "" where a row was not labelled (a try-out's Y/N `faithful` column, blank on the
    refusals) is a label on the other rows, as a CSV's empty cell (read as NaN) is; it was refused as "no binary
    label column"."""
    from evalkit.decide.calibrate.labels import binary_labels
    from evalkit.publish.experiment import load_experiment

    path = tmp_path / "d.jsonl"
    rows = [{"question": q, "contexts": [CTX], "answer": a, "faithful": "N" if y else ("" if i == 2 else "Y")}
            for i, (q, a, y) in enumerate(ROWS)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    exp = tmp_path / "e.yaml"
    assert main(["init", str(path), "-o", str(exp)]) == 0
    cal = load_experiment(exp).calibration
    assert (cal["label"], cal["positive"]) == ("faithful", "N")
    assert binary_labels([r["faithful"] for r in rows], positive="N") == [
        None if i == 2 else bool(y) for i, (_, _, y) in enumerate(ROWS)]
