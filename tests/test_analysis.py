"""evalkit/publish/analysis.py: the numbers a report shows that are not covered by the notebooks' own tests."""
import pandas as pd

from evalkit.publish.analysis import threshold_boundary
from evalkit.base.config import VerdictThresholds
from evalkit.base.thresholds import Threshold

# by hand: rows 0, 1 and 4 score exactly 0.5 (rows 0 and 1 labelled hallucinated, row 4 not); 0.4999 and 0.25 are
# below, 1.0 above, None missing. relevance 0.1 exactly on rows 0 and 2.
FRAME = pd.DataFrame({"hallucination": [0.5, 0.5, 0.25, 1.0, 1 / 2, None, 0.4999],
                      "relevance": [0.1, 0.5, 0.1, 0.9, 0.3, 0.2, 0.05],
                      "hallucinated": [True, True, False, True, False, True, False],
                      "faithful": ["N", "N", "Y", "N", "Y", "N", "Y"]})


def test_rows_exactly_on_the_seed_threshold_pass_and_are_counted():
    out = {b["metric"]: b for b in threshold_boundary(FRAME, label="hallucinated")}
    h = out["hallucination"]
    assert (h["rule"], h["n_on"], h["flagged"], h["n_on_positive"]) == ("hallucination > 0.5", 3, False, 2)
    assert h["text"].startswith("hallucination > 0.5 is strict: 3 rows score exactly 0.5 and are not flagged by it "
                                "(one unsupported anchor of two gives exactly 0.5 and passes)")
    assert "2 of them are labelled bad (hallucinated is True)" in h["text"]
    r = out["relevance"]
    assert (r["rule"], r["n_on"], r["flagged"], r["n_on_positive"]) == ("relevance < 0.1", 2, False, 1)
    assert "completeness" not in out  # no such column: no entry


def test_a_calibrated_inclusive_rule_flags_the_boundary():
    t = VerdictThresholds(profile=(Threshold("hallucination", 0.5, "above", True),))
    h = next(b for b in threshold_boundary(FRAME, t, label="faithful", positive="N") if b["metric"] == "hallucination")
    assert (h["rule"], h["n_on"], h["flagged"], h["n_on_positive"]) == ("hallucination >= 0.5", 3, True, 2)
    assert h["text"] == ("hallucination >= 0.5 includes its threshold: 3 rows score exactly 0.5 and are flagged "
                         "(FAIL). 2 of them are labelled bad (faithful = N).")


def test_the_report_numbers_hold_the_boundary(tmp_path):
    from evalkit.publish.analysis import analyze
    from evalkit.publish.experiment import Experiment

    res = FRAME.assign(verdict=["PASS"] * 7, error=[None] * 7)
    out = analyze(res, Experiment(name="x", data=str(tmp_path / "d.csv")))
    h = next(b for b in out["verdict_boundary"] if b["metric"] == "hallucination")
    assert h["n_on"] == 3 and h["n_on_positive"] == 2  # the 'hallucinated' column is read as the label


def test_sections_say_which_columns_a_missing_metric_reads():
    from evalkit.publish.analysis import notebook_section, plan_sections
    from evalkit.publish.experiment import Experiment

    plan = plan_sections(pd.DataFrame({"relevance": [0.5], "error": [None]}), Experiment(name="x", data="d.csv"))
    assert plan["relevance"].applies and not plan["hallucination"].applies
    assert plan["completeness"].note == "completeness was not scored: the data needs 'question' and 'answer'"
    assert plan["hallucination"].note == ("hallucination was not scored: the data needs a 'contexts' column "
                                          "(retrieved passages)")
    assert plan["reference"].note == "no reference answers: add a 'ground_truth' column for the reference-based metrics"
    # any metric that compares with the expected answer opens the reference section; one that does not, no
    assert plan_sections(pd.DataFrame({"exact_match": [True]}), Experiment(name="x", data="d.csv"))["reference"].applies
    assert not plan_sections(pd.DataFrame({"dont_know": [True]}), Experiment(name="x", data="d.csv"))["reference"].applies
    assert [notebook_section(n) for n in ("02_completeness", "03_hallucination", "04_reference_metrics", "08_report")] \
        == ["completeness", "hallucination", "reference", None]


def test_the_boundary_note_belongs_to_the_cut_value_it_explains():
    t = VerdictThresholds(named="seed", hallucination_fail=0.4)  # a strict rule at another value: no 0.5 story
    h = next(b for b in threshold_boundary(FRAME.assign(hallucination=0.4), t) if b["metric"] == "hallucination")
    assert h["text"].startswith("hallucination > 0.4 is strict: 7 rows score exactly 0.4 and are not flagged by it; ")


def test_a_threshold_at_the_best_score_has_no_boundary_rows():
    """Newcomer try-out: "unsupported_facts > 0 is strict: 18 rows score exactly 0 and are not flagged" read as a
    borderline warning about the best answers. Rows on a threshold that is the metric's best score are not
    counted; a threshold between scores still is (answers_question < 0.5: by hand, rows 1 and 2 sit on 0.5)."""
    frame = pd.DataFrame({"unsupported_facts": [0.0, 0.0, 0.5], "reference_conflict": [0.0, 0.0, 0.0],
                          "answers_question": [1.0, 0.5, 0.5], "question_coverage": [1.0, 1.0, 0.5]})
    out = {b["metric"]: b for b in threshold_boundary(frame, VerdictThresholds(named="evalkit"))}
    assert set(out) == {"answers_question"}
    assert (out["answers_question"]["n_on"], out["answers_question"]["flagged"]) == (2, False)


def test_the_report_numbers_estimate_the_label_rate_per_system(tmp_path):
    """metrics.json's "estimate": the calibration label's rate per system by PPI++; labelled throughout, the
    estimate is the labels' own mean (by hand: a 3/20, b 12/20)."""
    import numpy as np

    from evalkit.publish.analysis import analyze
    from evalkit.publish.experiment import Experiment

    rng = np.random.default_rng(0)
    bad = [i < 3 for i in range(20)] + [i < 12 for i in range(20)]
    res = pd.DataFrame({"id": [f"q{i}" for i in range(20)] * 2, "system": ["a"] * 20 + ["b"] * 20,
                        "hallucination": np.clip(np.array(bad) * 0.5 + rng.normal(0.2, 0.2, 40), 0, 1),
                        "hallucinated": bad, "error": None})
    exp = Experiment(name="x", data=str(tmp_path / "d.csv"),
                     calibration={"score": "hallucination", "label": "hallucinated"})
    est = analyze(res, exp)["estimate"]
    assert est["target"] == "hallucinated" and est["using"] == ["hallucination"] and "ppi-python" in est["method"]
    got = {e["group"]: e for e in est["estimates"]}
    assert got["a"]["ppi"]["estimate"] == 3 / 20 and got["b"]["ppi"]["estimate"] == 12 / 20
    assert got["a"]["labelled"] == got["a"]["rows"] == 20


def test_an_experiment_can_ask_for_a_guaranteed_threshold(tmp_path):
    import numpy as np

    from evalkit.publish.analysis import analyze
    from evalkit.publish.experiment import Experiment

    rng = np.random.default_rng(1)
    bad = rng.random(400) < 0.3
    res = pd.DataFrame({"id": [f"q{i}" for i in range(400)], "hallucinated": bad, "error": None,
                        "hallucination": np.clip(bad * 0.5 + rng.normal(0.2, 0.15, 400), 0, 1)})
    exp = Experiment(name="x", data=str(tmp_path / "d.csv"),
                     calibration={"score": "hallucination", "label": "hallucinated", "guarantee": "false_pass<=0.15",
                                  "delta": 0.1, "split": "seeded"})
    cal = analyze(res, exp)["calibration"]
    assert cal["guarantee"]["measure"] == "false_pass" and cal["guarantee"]["rows"] == 200
    assert any(line.startswith("on 200 held-out rows: false_pass ") for line in cal["summary"])


def test_rows_on_a_threshold_are_named_by_id():
    """A newcomer read "1 row scores exactly 0.5" and could not find the row: each is named by its id, five at
    most, the rest counted."""
    one = threshold_boundary(FRAME.assign(id=[f"q{i}" for i in range(7)]), label="hallucinated")
    h = next(b for b in one if b["metric"] == "hallucination")
    assert h["ids"] == ["q0", "q1", "q4"]
    assert h["text"].startswith("hallucination > 0.5 is strict: 3 rows (q0, q1, q4) score exactly 0.5 and are not")
    many = pd.DataFrame({"id": [f"r{i}" for i in range(7)], "hallucination": [0.5] * 7})
    h = threshold_boundary(many)[0]
    assert "7 rows (r0, r1, r2, r3, r4 and 2 more) score exactly 0.5" in h["text"], h["text"]


def test_the_appendix_shows_the_scores_of_the_profile_that_decided():
    """A newcomer read the seed profile's relevance beside the evalkit profile's verdicts: the appendix shows the
    deciding profile's metrics (verdict_roles), and no column empty throughout."""
    from evalkit.publish.analysis import appendix_columns

    res = pd.DataFrame({"id": ["a", "b"], "system": ["x", "y"], "answer": ["230 V.", "Two."],
                        "relevance": [0.0, 0.1], "completeness": [1.0, 0.5], "hallucination": [0.0, 0.0],
                        "unsupported_facts": [0.0, 0.5], "answers_question": [1.0, 1.0],
                        "question_coverage": [1.0, 1.0], "reference_conflict": [None, None],
                        "verdict": ["PASS", "FAIL"], "verdict_rule": ["all checks passed", "unsupported_facts"],
                        "error": [None, None]})
    assert appendix_columns(res, "evalkit") == ["id", "system", "answer", "unsupported_facts", "answers_question",
                                                "question_coverage", "verdict", "verdict_rule"]
    assert appendix_columns(res, "seed") == ["id", "system", "answer", "hallucination", "relevance", "completeness",
                                             "verdict", "verdict_rule"]
