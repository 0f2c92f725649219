import json

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.base.data import DataError, canonicalize, load, save


def _write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


ROWS = [
    {"id": "a", "question": "Q1?", "contexts": ["c1", "c2"], "answer": "A1", "ground_truth": "G1", "hallucinated": True},
    {"id": "b", "question": "Q2?", "contexts": ["c3"], "answer": None, "ground_truth": "G2", "hallucinated": False},
]


def test_load_sample_has_canonical_columns(sample_df):
    assert list(sample_df.columns[:7]) == ["id", "question", "contexts", "answer", "ground_truth", "system", "question_type"]
    assert len(sample_df) == 84 and sample_df["system"].nunique() == 2
    assert all(isinstance(c, list) and all(isinstance(x, str) for x in c) for c in sample_df["contexts"])
    assert {"hallucinated", "correct", "human_score"} <= set(sample_df.columns)
    assert len(sample_df.attrs["sha256"]) == 64


@pytest.mark.parametrize("ext", ["jsonl", "csv", "parquet"])
def test_every_format_round_trips(tmp_path, ext):
    src = canonicalize(pd.DataFrame(ROWS))
    path = save(src, tmp_path / f"d.{ext}")
    df = load(path)
    assert df["id"].tolist() == ["a", "b"]
    assert df["contexts"].tolist() == [["c1", "c2"], ["c3"]]
    assert df.loc[1, "answer"] is None or df.loc[1, "answer"] == ""  # CSV cannot tell None from ""
    assert df.loc[0, "answer"] == "A1"
    assert bool(df.loc[0, "hallucinated"]) is True


def test_none_answer_is_kept_not_dropped(tmp_path):
    df = load(_write_jsonl(tmp_path / "d.jsonl", ROWS))
    assert len(df) == 2 and df.loc[1, "answer"] is None


def test_ragas_column_names(tmp_path):
    rows = [{"user_input": "Q?", "retrieved_contexts": ["ctx"], "response": "R", "reference": "G"}]
    df = load(_write_jsonl(tmp_path / "r.jsonl", rows))
    assert df.loc[0, "question"] == "Q?" and df.loc[0, "contexts"] == ["ctx"]
    assert df.loc[0, "answer"] == "R" and df.loc[0, "ground_truth"] == "G"
    assert df.loc[0, "id"] == "row-1"


def test_explicit_column_mapping(tmp_path):
    rows = [{"qid": 7, "prompt": "Q?", "output": "A", "passages": "one passage"}]
    df = load(_write_jsonl(tmp_path / "m.jsonl", rows),
              columns={"id": "qid", "question": "prompt", "answer": "output", "contexts": "passages"})
    assert df.loc[0, "id"] == "7" and df.loc[0, "contexts"] == ["one passage"]


@pytest.mark.parametrize("value,expected", [
    (["a", "b"], ["a", "b"]),
    ('["a", "b"]', ["a", "b"]),
    ("single context", ["single context"]),
    ("[1] Source: a bracketed citation, not JSON", ["[1] Source: a bracketed citation, not JSON"]),
    (None, None),  # null: no contexts given (context metrics are undetermined), not an empty retrieval
    ("['a', 'b']", ["a", "b"]),  # a Python list literal (str(list)), read with a warning
    ("", []),
    (np.array(["x", "y"]), ["x", "y"]),
])
def test_contexts_forms(value, expected):
    df = canonicalize(pd.DataFrame({"question": ["q"], "answer": ["a"], "contexts": [value]}))
    assert df.loc[0, "contexts"] == expected


def test_missing_answer_column_is_named(tmp_path):
    p = _write_jsonl(tmp_path / "bad.jsonl", [{"question": "Q?", "contexts": []}])
    with pytest.raises(DataError, match=r"missing required column 'answer'"):
        load(p)


def test_missing_mapped_column(tmp_path):
    p = _write_jsonl(tmp_path / "bad.jsonl", [{"question": "Q?", "answer": "A"}])
    with pytest.raises(DataError, match=r"no column 'output'"):
        load(p, columns={"answer": "output"})


def test_malformed_jsonl_names_the_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"question": "Q", "answer": "A"}\n\n{"question": "Q2", "answer": \n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.jsonl: line 3: malformed JSON"):
        load(p)


def test_jsonl_line_not_an_object(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"question": "Q", "answer": "A"}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"line 2: expected a JSON object, got list"):
        load(p)


def test_numeric_answer_and_ground_truth_read_as_text(tmp_path):
    p = _write_jsonl(tmp_path / "n.jsonl", [{"question": "Q", "answer": "A", "ground_truth": 604},
                                            {"question": "Q", "answer": 42, "ground_truth": 6.5},
                                            {"question": "Q", "answer": None, "ground_truth": None}])
    df = load(p)
    assert df["answer"].tolist() == ["A", "42", None]
    assert df["ground_truth"].tolist() == ["604", "6.5", None]  # the int column widened to float reads back "604"


def test_non_text_answer_names_row_and_column(tmp_path):
    p = _write_jsonl(tmp_path / "bad.jsonl", [{"question": "Q", "answer": "A"}, {"question": "Q", "answer": [1, 2]}])
    with pytest.raises(DataError, match=r"line 2, column 'answer': expected text, got list"):
        load(p)
    p = _write_jsonl(tmp_path / "bad2.jsonl", [{"question": "Q", "answer": True}])
    with pytest.raises(DataError, match=r"line 1, column 'answer': expected text, got bool True"):
        load(p)


def test_non_string_context_item(tmp_path):
    p = _write_jsonl(tmp_path / "bad.jsonl", [{"question": "Q", "answer": "A", "contexts": ["ok", 3]}])
    with pytest.raises(DataError, match=r"line 1, column 'contexts': item 1 should be a string, got int"):
        load(p)


def test_duplicate_ids_are_kept_with_a_warning_naming_the_lines(tmp_path, caplog):
    p = tmp_path / "dup.csv"
    pd.DataFrame({"id": ["x", "x", "y"], "question": ["q", "q", "r"], "answer": ["a", "b", "c"]}).to_csv(p, index=False)
    with caplog.at_level("WARNING", logger="evalkit"):
        df = load(p)
    assert df["answer"].tolist() == ["a", "b", "c"]  # no row dropped
    assert "duplicate id at row 1 (line 2), row 2 (line 3)" in caplog.text and "row 3" not in caplog.text


def test_read_table_needs_no_answer_columns(tmp_path):
    from evalkit.base.data import read_table

    p = tmp_path / "s.csv"
    p.write_text("s,y\n0.5,yes\n0.1,no\n", encoding="utf-8")
    df = read_table(p, columns={"score": "s"})
    assert df.columns.tolist() == ["score", "y"] and df["score"].tolist() == [0.5, 0.1]
    with pytest.raises(DataError, match=r"no column 'nope'"):
        read_table(p, columns={"label": "nope"})


def test_parse_column_mapping():
    from evalkit.base.data import parse_column_mapping

    assert parse_column_mapping("answer=model_output,contexts=docs") == {"answer": "model_output", "contexts": "docs"}
    assert parse_column_mapping(None) == {}
    with pytest.raises(DataError, match="expected NAME=SOURCE"):
        parse_column_mapping("answer")


def test_csv_keeps_text_verbatim(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("question,answer,contexts\nWhat?,NA,\"[\"\"c1\"\"]\"\n", encoding="utf-8")
    df = load(p)
    assert df.loc[0, "answer"] == "NA"  # not turned into a missing value
    assert df.loc[0, "contexts"] == ["c1"]


def test_unknown_extension_and_missing_file(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load(tmp_path / "nope.jsonl")
    p = tmp_path / "d.txt"
    p.write_text("x")
    with pytest.raises(DataError, match="cannot tell the format"):
        load(p)


def test_same_id_allowed_across_systems(sample_df):
    assert sample_df.duplicated(["id"]).any() and not sample_df.duplicated(["id", "system"]).any()


def test_save_rejects_unknown_extension(tmp_path, sample_df):
    with pytest.raises(DataError, match="unsupported output extension"):
        save(sample_df, tmp_path / "x.xlsx")


def test_public_load_is_data_load():
    assert evalkit.load is load


def test_the_error_column_round_trips_its_records():
    from evalkit.base.data import RowError, error_cell, error_of, row_errors

    recs = [RowError("relevance", "ValueError", "bad | input"), RowError("faithfulness", "judge.JudgeError", "x: y")]
    cell = error_cell(recs)
    assert cell == "relevance: ValueError: bad | input | faithfulness: judge.JudgeError: x: y"  # written by hand
    assert row_errors(cell) == tuple(recs)
    assert error_of(cell, "faithfulness") == recs[1] and error_of(cell, "completeness") is None
    assert error_cell([]) is None and row_errors(None) == () and row_errors(float("nan")) == ()
    # text that is no record (a hand-edited cell) is kept, not dropped: one record with no metric
    assert row_errors("something broke") == (RowError("", "", "something broke"),)


def test_the_details_columns_are_read_back_by_one_loader_that_names_a_bad_cell():
    import pandas as pd
    import pytest

    from evalkit.decide.aggregate import evidence_table
    from evalkit.base.data import DetailsError, details_cell, details_of_cell
    from evalkit.decide.judge_variance import repeat_matrix

    d = {"terms": ["Lyon", "Gent | Ghent"], "cosine": 0.5, "note": "naïve"}
    assert details_of_cell(details_cell(d)) == d  # round trip, non-ASCII kept
    for bad in ("{not json", "[1, 2]", 3.5):
        with pytest.raises(DetailsError):
            details_of_cell(bad)
    df = pd.DataFrame({"relevance": [0.2, 0.4], "relevance_details": ['{"cosine": 0.5}', "{oops"]},
                      index=["q1", "q2"])
    with pytest.raises(ValueError, match=r"row 'q2', column relevance_details: not JSON"):
        evidence_table(df, "relevance")
    df = pd.DataFrame({"m": [1.0, 2.0], "m_details": ['{"repeats": [1, 2]}', "[3]"]})
    with pytest.raises(ValueError, match=r"row 1, column m_details: not a JSON object"):
        repeat_matrix(df, "m")


def test_as_saved_is_what_json_reads_back():
    """A checkpoint's header built in memory equals the one read from its manifest: written out by hand."""
    from pathlib import Path

    from evalkit.base.data import as_saved

    header = {"b": (1, 2), "a": {"z": Path("p/q"), "y": None}, "c": 0.5}
    assert as_saved(header) == {"b": [1, 2], "a": {"z": "p/q", "y": None}, "c": 0.5}
    assert list(as_saved(header)) == ["b", "a", "c"]
    sorted_ = as_saved(header, sort_keys=True)
    assert list(sorted_) == ["a", "b", "c"] and list(sorted_["a"]) == ["y", "z"]
    assert as_saved({3: 1}) == {"3": 1}
