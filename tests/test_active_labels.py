"""Active labelling: which rows label_next picks (by construction), the labels file, its join, the labeler
widget's writes, calibrate --labels end to end, and the explore view's numbers against scikit-learn."""
import csv
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import confusion_matrix, f1_score, precision_score, recall_score, roc_auc_score

import evalkit
from evalkit.decide.calibrate import CalibrationError
from evalkit.decide.calibrate.active import join_labels, label_next, labels_csv, read_labels
from evalkit.publish.lab import labeler, threshold_html, threshold_view


def _scores(n=100):
    return pd.DataFrame({"id": [f"r{i:03d}" for i in range(n)], "s": [i / n for i in range(n)]})


# --- label_next ---------------------------------------------------------------------------------------------------

def test_near_threshold_rows_come_from_the_strata_of_the_nearest_scores():
    # 100 distinct scores 0.00..0.99, threshold 0.455, 4 picks, no random share: the candidates are the 12 nearest
    # scores (0.40..0.51: 3 per pick), cut into 4 strata of 3 consecutive scores, one pick from each
    picked = label_next(_scores(), score="s", n=4, threshold=0.455, random_share=0.0, seed=0)
    got = sorted(picked["s"].round(2))
    for k, (lo, hi) in enumerate([(0.40, 0.42), (0.43, 0.45), (0.46, 0.48), (0.49, 0.51)]):
        assert lo <= got[k] <= hi
    assert all(w.startswith("closest to the threshold (rank ") for w in picked["why"])
    assert picked["distance"].tolist() == sorted(picked["distance"].tolist())  # nearest first
    assert np.allclose(picked["distance"], np.abs(picked["s"] - 0.455))


def test_a_threshold_pick_says_how_close_it_is_in_words_true_at_any_distance():
    """Three unlabelled rows at 0.0, 0.5 and 1.0 and a threshold of 0.0: a batch of 3 takes all three, and the one
    at 1.0 is the 3rd of 3 by distance, 1.000 away, not "near" the threshold."""
    df = pd.DataFrame({"id": ["a", "b", "c"], "s": [0.0, 0.5, 1.0]})
    picked = label_next(df, score="s", n=3, threshold=0.0, random_share=0.0, seed=0)
    assert picked["why"].tolist() == ["closest to the threshold (rank 1 of 3 unlabelled rows, 0.000 away)",
                                      "closest to the threshold (rank 2 of 3 unlabelled rows, 0.500 away)",
                                      "closest to the threshold (rank 3 of 3 unlabelled rows, 1.000 away)"]
    from evalkit.decide.calibrate.active import chosen_by_threshold

    # the labels file's selection: today's wording and the older one are both known as not random
    assert chosen_by_threshold(pd.Series([picked["why"].iloc[2], "near the threshold", "random share", None])
                               ).tolist() == [True, True, False, False]


def test_the_random_share_is_drawn_from_the_rest_and_is_seeded():
    a = label_next(_scores(), score="s", n=8, threshold=0.455, random_share=0.25, seed=3)
    b = label_next(_scores(), score="s", n=8, threshold=0.455, random_share=0.25, seed=3)
    c = label_next(_scores(), score="s", n=8, threshold=0.455, random_share=0.25, seed=4)
    assert a["id"].tolist() == b["id"].tolist() and a["id"].tolist() != c["id"].tolist()
    assert (a["why"] == "random share (keeps the whole range covered)").sum() == 2  # round(0.25 * 8)
    assert a["id"].is_unique


def test_ties_never_take_the_whole_batch():
    # 60 rows score 0, ten distinct scores above: a threshold at 0.05 sits between 0 and 0.1. Picks go round the
    # nearest distinct scores, so at most ceil(6 / distinct near scores) rows share score 0
    df = pd.DataFrame({"id": [f"z{i}" for i in range(60)] + [f"p{i}" for i in range(10)],
                       "s": [0.0] * 60 + [0.1 * (i + 1) for i in range(10)]})
    picked = label_next(df, score="s", n=6, threshold=0.05, random_share=0.0, seed=0)
    assert (picked["s"] == 0.0).sum() < 6 and picked["s"].nunique() > 1


def test_without_enough_labels_the_first_batch_spreads_over_the_range():
    picked = label_next(_scores(), score="s", n=5, seed=0)  # no labels at all: no threshold yet
    assert picked["threshold"].isna().all()
    assert picked["why"].str.startswith("spread over the score range").all()
    quint = sorted((picked["s"] * 5).astype(int))  # one pick in each fifth of the scores
    assert quint == [0, 1, 2, 3, 4]


def test_labelled_rows_are_never_asked_again_and_set_the_threshold():
    df = _scores()
    # labels on 10 rows: positives (flagged, high scores) from 0.7 up; Youden on them is 0.70
    known = pd.DataFrame({"id": [f"r{i:03d}" for i in (10, 20, 30, 40, 50, 60, 70, 80, 90, 95)],
                          "label": ["no"] * 6 + ["yes"] * 4})
    picked = label_next(df, score="s", n=10, labels=known, positive="yes", direction="higher", seed=0)
    assert not set(picked["id"]) & set(known["id"])
    assert picked["threshold"].iloc[0] == pytest.approx(0.70)


def test_bad_arguments_are_named():
    with pytest.raises(CalibrationError, match="no score column 'x'"):
        label_next(_scores(), score="x")
    with pytest.raises(CalibrationError, match="random_share must be within 0..1"):
        label_next(_scores(), score="s", random_share=1.5)


# --- the labels file --------------------------------------------------------------------------------------------

def test_labels_file_round_trip_last_label_wins(tmp_path):
    p = tmp_path / "labels.csv"
    p.write_text(labels_csv([{"id": "a", "label": "no", "labeller": "x", "timestamp": "t1"},
                             {"id": "b", "label": "yes", "labeller": "x", "timestamp": "t1"},
                             {"id": "a", "label": "yes", "labeller": "y", "timestamp": "t2"}]))
    got = read_labels(p)
    assert got.set_index("id")["label"].to_dict() == {"a": "yes", "b": "yes"}
    assert list(got.columns[:4]) == ["id", "label", "labeller", "timestamp"]


@pytest.mark.parametrize("text,message", [
    ("id,labeller\na,x\n", "lacks column(s) ['label']"),
    ("id,label\na,yes\n,no\n", "line 3: empty id"),
    ("id,label\na,\n", "line 2: empty label"),
])
def test_malformed_labels_files_name_the_place(tmp_path, text, message):
    p = tmp_path / "labels.csv"
    p.write_text(text)
    with pytest.raises(CalibrationError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")
                       .replace(")", r"\)")):
        read_labels(p)


def test_join_refuses_unknown_ids_and_ambiguous_ones():
    df = pd.DataFrame({"id": ["q1", "q1", "q2"], "system": ["a", "b", "a"], "s": [0.1, 0.2, 0.3]})
    with pytest.raises(CalibrationError, match="ids repeat in the results"):
        join_labels(df, pd.DataFrame({"id": ["q1"], "label": ["yes"]}), "human")
    with pytest.raises(CalibrationError, match="not in the results, e.g. 'q9 / a'"):
        join_labels(df, pd.DataFrame({"id": ["q9"], "label": ["yes"], "system": ["a"]}), "human")
    out = join_labels(df, pd.DataFrame({"id": ["q1"], "label": ["yes"], "system": ["b"]}), "human")
    assert out["human"].tolist() == [None, "yes", None]


# --- the labeler widget writes the file ----------------------------------------------------------------------

def test_labeler_writes_each_label_and_resumes(tmp_path):
    rows = pd.DataFrame({"id": ["a", "b", "c"], "question": ["q?"] * 3, "answer": ["x", "y", "z"]})
    out = tmp_path / "labels.csv"
    lab = labeler(rows, out=out, labeller="ann")
    lab.record("yes")
    lab.skip()
    lab.record("no")
    assert lab.current is None and "done" in lab.html()
    got = list(csv.DictReader(out.open()))
    assert [(r["id"], r["label"], r["labeller"]) for r in got] == [("a", "yes", "ann"), ("c", "no", "ann")]
    assert all(r["timestamp"].endswith("+00:00") for r in got)
    again = labeler(rows, out=out, labeller="bob")  # a new session asks only what is not labelled yet
    assert again.rows["id"].iloc[again.current] == "b"
    again.record("yes")
    assert sorted(r["id"] for r in csv.DictReader(out.open())) == ["a", "b", "c"]


def test_labeler_html_shows_the_row_with_its_evidence(tmp_path):
    rows = pd.DataFrame({"id": ["a"], "question": ["What <b>?"], "answer": ["It is 5."]})
    page = labeler(rows, out=tmp_path / "l.csv", ask="hallucinated?").html()
    assert "row 1 of 1" in page and "What &lt;b&gt;?" in page and "ek-show" in page
    assert "<b>hallucinated? yes / no / skip</b>" in page  # what the buttons answer, before the row's card
    assert page.index("hallucinated? yes") < page.index("ek-show")


def test_labeler_buttons_say_what_they_answer_above_the_card(tmp_path):
    w = pytest.importorskip("ipywidgets")
    rows = pd.DataFrame({"id": ["a"], "question": ["q?"], "answer": ["x"]})
    widget = labeler(rows, out=tmp_path / "l.csv", labels=("Y", "N"), ask="faithful?").build()
    bar, page = widget.children
    assert [c.value if isinstance(c, w.Label) else c.description for c in bar.children] == \
        ["faithful?", "Y", "N", "skip"]
    assert "ek-show" in page.value


def test_the_labellers_card_is_compact_in_a_browser(tmp_path, sample_results):
    """What a person reads to label a row (verdict, question, answer with its anchors, contexts) is open; the
    verdict's rules, the metrics and the support model's claims are folded, so the card is short (measured in
    headless Chromium at 1000 px: the full evidence card of a sample row is over 1,000 px tall)."""
    from pathlib import Path

    sync_api = pytest.importorskip("playwright.sync_api")
    from evalkit.publish.view.html import page
    from evalkit.publish.view.show import show

    row = sample_results.iloc[[0]]
    card = labeler(row, out=tmp_path / "l.csv", ask="hallucinated?").html()
    import re

    folded = re.search(r"<summary[^>]*>the verdict's rules, \d+ metrics", card)
    assert folded and re.search(r"<h4[^>]*>answer</h4>", card).start() < folded.start()
    full = show(sample_results, row["id"].iloc[0], system=row["system"].iloc[0])._repr_html_()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(Path("/usr/bin/chromium")), args=["--no-sandbox"])
        try:
            tab = browser.new_page(viewport={"width": 1000, "height": 700})
            heights = []
            for fragment in (card, full):
                tab.set_content(page(fragment, "card"))
                heights.append(tab.evaluate("document.querySelector('.ek-show').getBoundingClientRect().height"))
        finally:
            browser.close()
    compact, whole = heights
    assert whole > 1000 and compact < 500, heights


# --- calibrate --labels ------------------------------------------------------------------------------------------

def test_calibrate_reads_a_labels_file_joined_on_id(tmp_path):
    rng = np.random.default_rng(0)
    n = 60
    s = rng.random(n)
    truth = (s + rng.normal(0, 0.25, n)) > 0.6
    res = pd.DataFrame({"id": [f"r{i}" for i in range(n)], "score": s})
    res.to_csv(tmp_path / "res.csv", index=False)
    chosen = rng.choice(n, size=40, replace=False)
    recs = [{"id": f"r{i}", "label": "yes" if truth[i] else "no", "labeller": "t", "timestamp": "x"} for i in chosen]
    (tmp_path / "labels.csv").write_text(labels_csv(recs))
    proc = subprocess.run([sys.executable, "-m", "evalkit.cli", "calibrate", "res.csv", "--score", "score", "--label",
                           "human", "--labels", "labels.csv", "--positive", "yes", "--resamples", "50", "--json",
                           "cal.json"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    cal = json.loads((tmp_path / "cal.json").read_text())
    assert cal["n_used"] == 40  # the 20 rows the file does not name are unlabelled, left out
    auc = roc_auc_score(truth[chosen].astype(int), s[chosen])  # an independent implementation, same 40 rows
    assert cal["roc_auc"]["estimate"] == pytest.approx(auc)


def test_calibrate_labels_file_must_not_be_an_output(tmp_path):
    (tmp_path / "res.csv").write_text("id,score\na,0.1\nb,0.9\n")
    (tmp_path / "labels.csv").write_text("id,label\na,no\nb,yes\n")
    proc = subprocess.run([sys.executable, "-m", "evalkit.cli", "calibrate", "res.csv", "--score", "score", "--label",
                           "h", "--labels", "labels.csv", "--json", "labels.csv"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2 and "labels.csv" in proc.stderr
    assert (tmp_path / "labels.csv").read_text() == "id,label\na,no\nb,yes\n"


# --- explore's numbers ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.52])
def test_threshold_view_matches_sklearn(threshold):
    rng = np.random.default_rng(1)
    s = rng.random(50).round(2)
    y = (s + rng.normal(0, 0.3, 50)) > 0.5
    df = pd.DataFrame({"id": range(50), "s": s, "bad": y})
    v = threshold_view(df, score="s", label="bad", threshold=threshold, direction="higher", n_resamples=0)
    pred = s >= threshold  # the boundary value itself is flagged (the verdict's >=)
    tn, fp, fn, tp = confusion_matrix(y, pred).ravel()
    assert v["counts"] == {"tp": tp, "fp": fp, "tn": tn, "fn": fn}
    assert v["precision"].estimate == pytest.approx(precision_score(y, pred))
    assert v["recall"].estimate == pytest.approx(recall_score(y, pred))
    assert v["f1"].estimate == pytest.approx(f1_score(y, pred))
    nearest = np.abs(s - threshold)[v["nearest"]]
    assert list(nearest) == sorted(nearest) and nearest.max() <= np.sort(np.abs(s - threshold))[2]
    html = threshold_html(v, "s", "bad")
    assert f"TP {tp}" in html and f"FN {fn}" in html


def test_explore_draws_and_follows_the_slider():
    pytest.importorskip("ipywidgets")
    df = pd.DataFrame({"id": list("abcdef"), "question": ["q"] * 6, "answer": ["a"] * 6,
                       "s": [0.1, 0.2, 0.4, 0.6, 0.8, 0.9], "bad": [0, 0, 1, 0, 1, 1]})
    lab = evalkit.explore(df, "s", "bad", direction="higher", n_resamples=0)
    assert lab.view["threshold"] == 0.4  # Youden: TPR 1, FPR 1/3 at 0.4
    first = lab.summary.value
    lab.slider.value = 0.85
    assert lab.view["counts"] == {"tp": 1, "fp": 0, "tn": 3, "fn": 2} and lab.summary.value != first
    assert lab.rows.value.count('class="ek-show ') == 3


def test_explore_draws_static_html_without_widgets(monkeypatch):
    import evalkit.publish.lab as lab

    monkeypatch.setattr(lab, "_widgets", lambda: None)  # as without the lab extra: a report page, a plain kernel
    df = pd.DataFrame({"id": list("abcd"), "s": [0.1, 0.4, 0.6, 0.9], "bad": [0, 0, 1, 1]})
    view = lab.explore(df, "s", "bad", direction="higher", n_resamples=0)
    assert view.widget is None
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"} and "TP 2" in bundle["text/html"]


def test_the_widget_bundle_also_carries_static_html():
    pytest.importorskip("ipywidgets")
    df = pd.DataFrame({"id": list("abcd"), "s": [0.1, 0.4, 0.6, 0.9], "bad": [0, 0, 1, 1]})
    bundle = evalkit.explore(df, "s", "bad", direction="higher", n_resamples=0)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "TP 2" in bundle["text/html"]


def test_labeler_keeps_the_files_columns_and_another_labellers_rows(tmp_path):
    out = tmp_path / "labels.csv"
    out.write_text("id,label,labeller,timestamp,note\nz,no,bob,t0,checked twice\n")
    rows = pd.DataFrame({"id": ["a", "b"], "answer": ["x", "y"], "why": ["near the threshold", "random share"]})
    first, second = labeler(rows, out=out, labeller="ann"), labeler(rows, out=out, labeller="cy")
    first.record("yes")  # a
    second.record("no")  # a again (cy's view was made before ann's label): replaces it, keeps z
    got = {r["id"]: r for r in csv.DictReader(out.open())}
    assert set(got) == {"z", "a"} and got["z"]["note"] == "checked twice" and got["a"]["labeller"] == "cy"
    assert got["a"]["selection"] == "near the threshold" and got["z"]["selection"] == ""


def test_calibrate_labels_name_their_file_and_say_how_they_were_chosen(tmp_path):
    (tmp_path / "res.csv").write_text("id,score,human\na,0.1,\nb,0.9,\nc,0.5,\nd,0.7,\n")
    (tmp_path / "near.csv").write_text("id,label,selection\na,no,random share\nb,yes,near the threshold\n"
                                       "c,no,near the threshold\nd,yes,near the threshold\nd,yes,near the threshold\n")
    run = lambda *extra: subprocess.run([sys.executable, "-m", "evalkit.cli", "calibrate", "res.csv", "--score",  # noqa
                                         "score", "--resamples", "20", "--min-per-class", "2", *extra], cwd=tmp_path, capture_output=True,
                                        text=True, timeout=300)
    ok = run("--label", "mine", "--labels", "near.csv", "--positive", "yes")
    assert ok.returncode == 0, ok.stderr
    assert "3 of 4 labels were chosen near the threshold" in ok.stderr  # the duplicate d counts once
    assert "1 answer(s) are labelled more than once" in ok.stderr
    assert "note: a small sample (2 positive, 2 negative" in ok.stdout
    (tmp_path / "bad.csv").write_text("id,label\na,no\nb,yes\nc,maybe\n")
    bad = run("--label", "mine", "--labels", "bad.csv", "--positive", "yes")
    assert bad.returncode == 2 and bad.stderr.splitlines()[-1].startswith("evalkit: error: bad.csv: column 'mine'")
    (tmp_path / "res2.csv").write_text("id,score,human\na,0.1,no\nb,0.9,yes\n")
    taken = subprocess.run([sys.executable, "-m", "evalkit.cli", "calibrate", "res2.csv", "--score", "score", "--label",
                            "human", "--labels", "near.csv"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert taken.returncode == 2 and "already hold labels in column 'human'" in taken.stderr


def test_explore_prints_its_operating_point_and_each_nearest_rows_label():
    """print(explore(...)) outside a notebook: the rule, the confusion counts (hand-counted below), and each nearest
    row with its human label and the slider's decision; a row exactly on the threshold is flagged (>=)."""
    df = pd.DataFrame({"id": list("abcd"), "question": ["q"] * 4, "answer": ["a"] * 4,
                       "s": [0.1, 0.5, 0.6, 0.9], "bad": ["N", "Y", "N", "Y"]})
    text = str(evalkit.explore(df, "s", "bad", positive="Y", direction="higher", threshold=0.5, n_resamples=0,
                               n_rows=2))
    # flagged: s >= 0.5 -> b (Y), c (N), d (Y): TP 2, FP 1; not flagged: a (N): TN 1, FN 0
    assert text.splitlines()[:2] == ["evalkit.explore: flag s >= 0.500 on 4 labelled rows (2 bad positive)",
                                     "  TP 2  FP 1  FN 0  TN 1"]
    assert "    id b: s 0.500, bad Y; flagged at >= 0.500" in text  # exactly on it: flagged, as the matrix counts
    assert "    id c: s 0.600, bad N; flagged at >= 0.500" in text
    assert "object at 0x" not in repr(evalkit.explore(df, "s", "bad", positive="Y", n_resamples=0))


def test_explore_states_the_guaranteed_threshold_beside_youdens():
    """Youden's threshold by hand (sklearn's ROC: the cut maximising TPR - FPR) and the Learn-then-Test threshold
    (evalkit.calibrate.guarantee, itself checked against MAPIE in test_guarantee) both stated; a guarantee the
    labels cannot carry says so instead of showing a number."""
    from sklearn.metrics import roc_curve

    from evalkit.decide.calibrate.guarantee import guaranteed_threshold

    rng = np.random.default_rng(2)
    y = rng.random(300) < 0.3
    s = np.clip(0.5 * y + rng.normal(0.25, 0.2, 300), 0, 1)
    df = pd.DataFrame({"id": [f"r{i}" for i in range(300)], "question": "q", "answer": "a", "s": s,
                       "bad": np.where(y, "Y", "N")})
    fpr, tpr, cuts = roc_curve(y, s)
    youden = cuts[np.argmax(tpr - fpr)]
    g = guaranteed_threshold(s, y.astype(int), "precision>=0.8", delta=0.1, direction="higher")
    lab = evalkit.explore(df, "s", "bad", positive="Y", direction="higher", n_resamples=0,
                          guarantee="precision>=0.8")
    text = str(lab)
    assert f"  Youden's threshold: flag s >= {youden:.3f} (no guarantee)" in text
    assert f"  guaranteed threshold: flag s >= {g.threshold:.3f}, precision >= 0.8 with probability >= 0.9" in text
    assert "guaranteed threshold: flag s &gt;= " in lab.html()
    tiny = evalkit.explore(df.head(12), "s", "bad", positive="Y", direction="higher", n_resamples=0,
                           guarantee="precision>=0.99")
    assert "guaranteed threshold: none; no threshold meets precision >= 0.99" in str(tiny)
