"""evalkit.publish.view (evalkit.show): one row's evidence as HTML and text.

Expected highlights are written by hand: from a hand-made frame (anchors, evidence and values typed below) and
from a real ``evaluate`` run on three rows written here, where which numbers and dates the context lacks is read
off the text. The HTML is read back with the standard library's parser, never with evalkit.publish.view's own code.
"""
from __future__ import annotations

import json
from html.parser import HTMLParser

import pandas as pd
import pytest

from evalkit.base.config import VerdictThresholds
from evalkit.publish.view.html import evidence_html
from evalkit.publish.view.show import show


class Marks(HTMLParser):
    """Every <mark> in document order: (text, class, title, inside the anchor list <ol>); every table row's cells;
    all text outside <style>."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.marks: list[dict] = []
        self.rows: list[list[str]] = []
        self.text: list[str] = []
        self._mark = None
        self._ol = 0
        self._style = False
        self._cell = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "mark":
            self._mark = {"text": "", "class": a.get("class"), "title": a.get("title"), "in_list": self._ol > 0}
        elif tag == "ol":
            self._ol += 1
        elif tag == "style":
            self._style = True
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "mark" and self._mark is not None:
            self.marks.append(self._mark)
            self._mark = None
        elif tag == "ol":
            self._ol -= 1
        elif tag == "style":
            self._style = False
        elif tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._style:
            return
        self.text.append(data)
        if self._mark is not None:
            self._mark["text"] += data
        if self._cell is not None:
            self._cell += data

    def answer_marks(self) -> list[tuple[str, str]]:
        return [(m["text"], m["class"]) for m in self.marks if not m["in_list"]]

    def rule_rows(self) -> dict[str, list[str]]:
        """Rules table rows keyed by the rule text (second cell)."""
        return {r[1]: r for r in self.rows if len(r) == 5 and r[0] != "outcome"}

    def metric_rows(self) -> dict[str, list[str]]:
        return {r[0]: r for r in self.rows if len(r) == 4 and r[0] != "metric"}


def _anchor(type_, text, supported, evidence=None):
    return {"type": type_, "text": text, "supported": supported, "evidence": evidence}


# ---------------------------------------------------------------------------------------------------------
# a hand-written frame
ANSWER = "Acme Corp raised the fee to $5 in 2021, then <script>alert(1)</script> cut it to $5 & more."
CONTEXT = "Acme Corp raised the fee to $5 in 2020. Fees & charges: see <b>table</b>."


def _frame() -> pd.DataFrame:
    anchors = [
        _anchor("claim", "Acme Corp raised the fee", True, "Acme Corp raised the fee to $5 in 2020."),
        _anchor("number", "$5", True, "…fee to $5 in 2020…"),
        _anchor("date", "2021", False),
        _anchor("number", "$5", False),  # the second $5: its own mention, not the first one again
        _anchor("entity", "Globex", False),  # not in the answer text: listed apart, not highlighted
    ]
    grounding = {"sentences": [{"sentence": ANSWER, "evidence": "Acme Corp raised the fee to $5 in 2020."}],
                 "fired": ["date(s) not in the context: " + ANSWER]}
    return pd.DataFrame({
        "id": ["a", "b", "b"], "system": ["s1", "s1", "s2"],
        "question": ["What did <Acme> & co do?", "Q2?", "Q3?"],
        "answer": [ANSWER, "No contexts here.", "Fine answer."],
        "contexts": [[CONTEXT], [], ["ctx"]],
        "hallucination": pd.array([0.6, None, 0.0], dtype="Float64"),
        "hallucination_details": [json.dumps({"anchors": anchors, "unsupported": ["2021", "$5", "Globex"]}),
                                  json.dumps({"reason": "no contexts: every anchor is unsupported"}), "{}"],
        "grounding_risk": pd.array([0.91, None, 0.1], dtype="Float64"),
        "grounding_risk_details": [json.dumps(grounding), "{}", "{}"],
        "relevance": pd.array([0.05, 0.5, 0.5], dtype="Float64"),
        "relevance_details": ['{"cosine": 0.1, "jaccard": 0.0}', "{}", "{}"],
        "completeness": pd.array([0.5, 1.0, 1.0], dtype="Float64"),
        "completeness_details": ['{"missing": ["co"], "matched": 1}', "{}", "{}"],
        "bert_score_f1": pd.array([85.261, 90.0, 90.0], dtype="Float64"),
        "bert_score_f1_details": ["{}", "{}", "{}"],
        "verdict": ["FAIL", "UNDETERMINED", "PASS"],
        "verdict_rule": ["hallucination 0.600 > 0.5", "hallucination missing", "all checks passed"],
        "error": [None, "grounding_risk: ValueError: no contexts", None],
    })


def test_unsupported_anchors_are_marked_and_supported_ones_differently():
    p = Marks(show(_frame(), "a")._repr_html_())
    # by hand: the claim covers "Acme Corp raised the fee"; "$5" (first) supported; "2021" and the second "$5"
    # unsupported; "Globex" is not in the answer, so it is not marked in it
    assert p.answer_marks() == [("Acme Corp raised the fee", "ek-ok"), ("$5", "ek-ok"), ("2021", "ek-bad"),
                                ("$5", "ek-bad")]
    titles = [m["title"] for m in p.marks if not m["in_list"]]
    assert "Acme Corp raised the fee to $5 in 2020." in titles[0]
    assert "not found" in titles[2] and "Acme Corp raised the fee to $5 in 2020." in titles[2]  # closest sentence
    listed = [(m["text"], m["class"]) for m in p.marks if m["in_list"]]
    assert ("Globex", "ek-bad") in listed and len(listed) == 5
    page = "".join(p.text)
    assert "✗3" in page and "✗4" in page and "✓2" in page


def test_overlapping_claim_and_number_split_into_segments():
    frame = _frame()
    answer = "Acme raised the fee to $7."
    frame.loc[0, "answer"] = answer
    frame.loc[0, "hallucination_details"] = json.dumps({"anchors": [
        _anchor("claim", "Acme raised the fee to $7", True, "Acme raised the fee to $5."),
        _anchor("number", "$7", False)]})
    p = Marks(show(frame, "a")._repr_html_())
    # the number inside the supported claim is red; the rest of the claim green
    assert p.answer_marks() == [("Acme raised the fee to ", "ek-ok"), ("$7", "ek-bad")]
    assert "$7" in str(show(frame, "a")).splitlines()[2] and "[$7]✗2" in str(show(frame, "a"))


def test_user_text_is_escaped():
    html_out = show(_frame(), "a")._repr_html_()
    assert "<script>" not in html_out and "&lt;script&gt;alert(1)&lt;/script&gt;" in html_out
    assert "&amp; more" in html_out and "&lt;Acme&gt; &amp; co" in html_out
    assert "<b>table</b>" not in html_out and "&lt;b&gt;table&lt;/b&gt;" in html_out  # the context
    frag = evidence_html(_frame().iloc[0])
    assert "<script>" not in frag and "&amp; more" in frag
    # the parsed text holds the original characters
    assert "<script>alert(1)</script> cut it to" in "".join(Marks(html_out).text)


def test_rules_show_value_threshold_fired_and_the_deciding_rule():
    frame = _frame()
    frame.loc[0, "hallucination"] = 0.2
    frame.loc[0, "verdict"], frame.loc[0, "verdict_rule"] = "FAIL", "relevance 0.050 < 0.1"
    rules = Marks(show(frame, "a")._repr_html_()).rule_rows()
    # by hand: 0.2 > 0.5 no; 0.05 < 0.1 yes and first, so it decides; 0.5 < 0.6 yes but never reached
    assert rules["hallucination > 0.5"][2:4] == ["0.200", "no"]
    assert rules["relevance < 0.1"][2:] == ["0.050", "yes", "decided the verdict"]
    assert rules["completeness < 0.6"][2:4] == ["0.500", "yes"] and "not reached" in rules["completeness < 0.6"][4]
    assert rules["ABSTAIN if the answer declines to answer"][3] == "no"


def test_thresholds_come_from_the_results_attrs():
    frame = _frame()
    frame.attrs["evalkit"] = {"config": {"thresholds": {"hallucination_fail": 0.7, "relevance_fail": 0.01,
                                                        "completeness_warn": 0.6, "profile": []}}}
    frame.loc[0, "verdict"], frame.loc[0, "verdict_rule"] = "WARN", "completeness 0.500 < 0.6"
    view = show(frame, "a")
    rules = Marks(view._repr_html_()).rule_rows()
    assert rules["hallucination > 0.7"][3] == "no" and rules["relevance < 0.01"][3] == "no"
    assert rules["completeness < 0.6"][4] == "decided the verdict" and view.notes == ()
    # the defaults disagree with the stored verdict: the view says so instead of hiding it
    assert "other thresholds" in show(frame, "a", thresholds=VerdictThresholds()).notes[0]


def test_metrics_on_their_scale_with_direction():
    rows = Marks(show(_frame(), "a")._repr_html_()).metric_rows()
    assert rows["bert_score_f1"][1:3] == ["85.3", "0..100, higher is better"]
    assert rows["hallucination"][1:3] == ["0.600", "0..1, lower is better"]
    assert rows["relevance"][3] == "cosine: 0.100; jaccard: 0.000"
    assert rows["completeness"][3] == "missing: co; matched: 1"
    assert show(_frame(), "a", metrics=["relevance"]).metrics[0].name == "relevance"


def test_undetermined_metric_and_verdict_show_the_reason():
    view = show(_frame(), "b", system="s1")
    p = Marks(view._repr_html_())
    assert p.rule_rows()["hallucination > 0.5"][2:] == [
        "missing", "not checked", "decided the verdict: undetermined (no contexts: every anchor is unsupported)"]
    metrics = p.metric_rows()
    assert metrics["hallucination"][1] == "undetermined"
    assert metrics["hallucination"][3].startswith("undetermined: no contexts: every anchor is unsupported")
    assert metrics["grounding_risk"][3] == "undetermined: error: ValueError: no contexts"  # from the error column
    frag = evidence_html(_frame().iloc[1])
    assert "hallucination has no value on this row: no contexts: every anchor is unsupported" in frag


def test_row_lookup_errors_name_the_id_and_the_row_count():
    with pytest.raises(KeyError, match=r"no row with id 'zz' among the 3 rows"):
        show(_frame(), "zz")
    with pytest.raises(KeyError, match=r"id 'b' names 2 of the 3 rows.*system="):
        show(_frame(), "b")
    no_ids = _frame().drop(columns=["id"])
    assert show(no_ids, 2).answer == "Fine answer."
    with pytest.raises(KeyError, match=r"no 'id' column.*position from 0 to 2 \(3 rows\)"):
        show(no_ids, 3)
    with pytest.raises(KeyError, match=r"not columns of these results"):
        show(_frame(), "a", metrics=["faithfulness"])


def test_evidence_html_shows_only_the_rule_that_fired():
    frag = evidence_html(_frame().iloc[0])
    p = Marks(frag)
    assert p.rows == []  # no rules table, no metrics table
    assert "hallucination 0.600 > 0.5" in "".join(p.text)
    question = str(_frame().iloc[0]["question"])
    assert question in "".join(p.text)  # a hallucination failure shows its question before the marked answer
    # the list holds the unsupported anchors only (by hand: 2021, the second $5, Globex)
    assert [m["text"] for m in p.marks if m["in_list"]] == ["2021", "$5", "Globex"]
    frame = _frame()
    frame.loc[0, "verdict"], frame.loc[0, "verdict_rule"] = "FAIL", "relevance 0.050 < 0.1"
    rel = "".join(Marks(evidence_html(frame.iloc[0])).text)
    assert "cosine: 0.100; jaccard: 0.000" in rel and "2021" in rel  # the answer, unmarked
    assert Marks(evidence_html(frame.iloc[0])).marks == []
    frame.loc[0, "verdict"], frame.loc[0, "verdict_rule"] = "WARN", "completeness 0.500 < 0.6"
    assert "question keywords missing from the answer: co" in "".join(Marks(evidence_html(frame.iloc[0])).text)
    # an explicit rule shows that metric's evidence instead
    assert "cosine: 0.100" in evidence_html(_frame().iloc[0], rule="relevance")


def test_summary_scorer_claims_are_marked():
    summary = "The council approved a $6 million budget. Taxes jump 5 percent."
    claims = [{"text": "The council approved a $6 million budget.", "label": "Partially",
               "evidence": ["The council approved a $4.2 million budget."], "unsupported_anchors": ["$6 million"]},
              {"text": "Taxes jump 5 percent.", "label": "Unsupported", "evidence": [],
               "unsupported_anchors": ["Taxes jump 5 percent", "5 percent"]}]
    frame = pd.DataFrame({"answer": [summary], "contexts": [["The council approved a $4.2 million budget."]],
                          "twin_lock": [3.0], "twin_lock_details": [json.dumps({"hallucination": {"claims": claims}})],
                          "twin_lock_coverage_score": [4.0]})
    view = show(frame, 0)
    p = Marks(view._repr_html_())
    # by hand: the first claim is partly supported (amber) with "$6 million" unsupported (red) inside it; the
    # second is unsupported, its first anchor is the claim itself (not marked twice); the space between is unmarked
    assert p.answer_marks() == [("The council approved a ", "ek-part"), ("$6 million", "ek-bad"),
                                (" budget.", "ek-part"), ("Taxes jump ", "ek-bad"), ("5 percent", "ek-bad"),
                                (".", "ek-bad")]
    assert "[The council approved a $6 million budget.]~1" in str(view)
    assert "partially supported; closest context: “The council approved a $4.2 million budget.”" in \
        view.highlights[0].explanation()
    assert p.metric_rows()["twin_lock"][1:] == ["3.00", "0..10, higher is better", "coverage_score: 4.00"]
    assert "no verdict" in view.notes[0]


# ---------------------------------------------------------------------------------------------------------
# a real evaluate run on three rows written here
@pytest.fixture(scope="module")
def three():
    import evalkit

    rows = pd.DataFrame({
        "id": ["num", "date", "abstain"],
        "question": ["What is the base premium for Territory 118?", "When did the rate manual take effect?",
                     "What is the maximum total discount?"],
        "contexts": [["The base premium for Territory 118 is $604 per year."],
                     ["The rate manual took effect on March 1, 2023. It replaced the 2022 manual."],
                     ["Rule C-4 caps the total discount at 25%."]],
        "answer": ["The base premium for Territory 118 is $640 per year.",
                   "The rate manual took effect on March 1, 2024.", "I don't know."],
    })
    return evalkit.evaluate(rows, ["relevance", "completeness", "hallucination", "grounding_risk"], {"profile": "seed"},
                            progress=False)


def test_real_run_marks_the_wrong_number(three):
    p = Marks(show(three, "num")._repr_html_())
    bad = [t for t, c in p.answer_marks() if c == "ek-bad"]
    ok = [t for t, c in p.answer_marks() if c == "ek-ok"]
    # by hand: the context says $604; $640 is the only number it lacks, 118 it has
    assert bad == ["$640"] and "118" in ok
    title = next(m["title"] for m in p.marks if m["text"] == "$640" and not m["in_list"])
    assert "The base premium for Territory 118 is $604 per year." in title  # the one context sentence


def test_real_run_marks_the_wrong_date_with_the_sentence_checked(three):
    p = Marks(show(three, "date")._repr_html_())
    assert [t for t, c in p.answer_marks() if c == "ek-bad"] == ["March 1, 2024"]
    title = next(m["title"] for m in p.marks if m["text"] == "March 1, 2024" and not m["in_list"])
    # by hand: of the two context sentences, the one about taking effect is the one to compare with
    assert "The rate manual took effect on March 1, 2023." in title and "It replaced" not in title
    assert "[March 1, 2024]✗" in str(show(three, "date"))


def test_real_run_abstention(three):
    view = show(three, "abstain")
    p = Marks(view._repr_html_())
    assert p.answer_marks() == []
    rules = p.rule_rows()
    assert rules["ABSTAIN if the answer declines to answer"][3:] == ["yes", "decided the verdict"]
    # relevance 0 < 0.1 would fail it, but the abstention rule comes first
    assert rules["relevance < 0.1"][3] == "yes" and "not reached" in rules["relevance < 0.1"][4]
    frag = "".join(Marks(evidence_html(three.iloc[2])).text)
    assert "ABSTAIN" in frag and "declining phrase matched: i don't know" in frag


def test_show_underlines_the_weakest_claim_and_shows_the_passage_checked():
    import json

    import pandas as pd

    from evalkit.publish.view.show import show

    details = {"sentences": [
        {"sentence": "The Fjell 60 costs €229.", "window": 0, "probability": 0.93, "window_text": "The Fjell 60 costs €229."},
        {"sentence": "The Fjell 45 costs €229.", "window": 0, "probability": 0.08,
         "window_text": "The Fjell 45 costs €189. The Fjell 60 costs €229."}], "weakest": 1}
    df = pd.DataFrame({"id": ["r1"], "question": ["Prices?"], "answer": ["The Fjell 60 costs €229. The Fjell 45 costs €229."],
                       "support": [0.08], "support_details": [json.dumps(details)]})
    view = show(df, "r1", metrics=["support"])
    html = view._repr_html_()
    assert "support: each claim and the passage checked" in html
    weak = html.index("<b>weakest</b>")
    assert "The Fjell 45 costs €229." in html[weak:weak + 300] and "ffd6d6" in html[weak:weak + 300]  # underlined
    assert "passage checked: The Fjell 45 costs €189. The Fjell 60 costs €229." in html
    assert "<style" not in html  # styled inline: an untrusted notebook keeps the look
    text = str(view)
    assert "* The Fjell 45 costs €229. -> 0.080" in text


def test_a_row_is_shown_from_one_reading_of_each_metrics_evidence():
    # no stored decision columns and no verdict: the abstention, the marks and the claims all come from evidence
    from evalkit.metrics.evidence import anchor_evidence
    from evalkit.metrics.registry import register_metric, scoped
    from evalkit.publish.view.model import row_view

    calls = []

    def counting(details, metric):
        calls.append(metric)
        return anchor_evidence(details, metric)

    details = {"abstention": False, "anchors": [{"type": "number", "text": "79", "supported": False}]}
    res = pd.DataFrame({"id": ["r1"], "question": ["How much?"], "answer": ["It costs 79 euros."],
                        "price_check": [1.0], "price_check_details": [json.dumps(details)]})
    with scoped():
        register_metric("price_check", lambda answer: 1.0, better="lower", range=(0, 1), evidence=counting)
        view = row_view(res, "r1")
    assert calls == ["price_check"]
    assert [(h.text, h.start, h.supported) for h in view.highlights] == [("79", 9, False)]


def test_an_evalkit_profile_run_is_shown_with_its_own_rules_and_named_in_the_paper():
    """#38: results scored under the evalkit profile keep it (show crashed reading its name as a cut value), show
    the profile's rules, and the paper's methods name the profile and its rules."""
    import types

    import evalkit
    from evalkit.base.config import EvalConfig
    from evalkit.metrics import verdict_roles
    from evalkit.publish.paper import _Text, _thresholds
    from evalkit.publish.view.model import thresholds_of

    df = pd.DataFrame({"id": ["a", "b"], "question": ["How heavy is the Orvo T2?"] * 2,
                       "answer": ["It weighs 2,400 grams.", "3.1 kg."],
                       "contexts": [["The Orvo T2 weighs 2.4 kg. The Orvo T3 weighs 3.1 kg."]] * 2})
    res = evalkit.evaluate(df, [name for name, _ in verdict_roles("evalkit")],
                           EvalConfig.from_dict({"profile": "evalkit"}), progress=False)
    assert thresholds_of(res).named == "evalkit"
    text = str(show(res, "b"))
    assert "verdict rules (evalkit profile):" in text and "unsupported_facts > 0" in text
    assert "hallucination > 0.5" not in text
    run = types.SimpleNamespace(results=res, signature=res.attrs["evalkit"]["signature"])
    methods = _thresholds(run, types.SimpleNamespace(calibration=None), _Text("markdown"), lambda *a: "")
    assert "verdict from the evalkit profile's rules" in methods
    assert "unsupported_facts > 0" in methods and "relevance < 0.1" not in methods


def test_an_evalkit_profile_row_is_marked_by_its_facts_not_the_seeds_anchors():
    """A newcomer read the seed hallucination metric's ✗ on a row the evalkit profile PASSed: the answer is marked
    by the profile's own metric (unsupported_facts: its facts, with their reasons), even where it marks nothing;
    under the seed profile the hallucination anchors are marked as before."""
    import evalkit
    from evalkit.base.config import EvalConfig
    from evalkit.metrics import verdict_roles

    df = pd.DataFrame({"id": ["a", "b"], "question": ["How heavy is the Orvo T2?"] * 2,
                       "answer": ["It weighs 2,400 grams.", "It weighs 3.1 kg."],
                       "contexts": [["The Orvo T2 weighs 2.4 kg. The Orvo T3 weighs 3.1 kg."]] * 2})
    names = [name for name, _ in verdict_roles("evalkit")] + ["hallucination"]
    res = evalkit.evaluate(df, names, EvalConfig.from_dict({"profile": "evalkit"}), progress=False)
    wrong = str(show(res, "b"))
    assert "[3.1 kg]✗1" in wrong, wrong
    assert "amount “3.1 kg”: the context gives 3.1 kg for" in wrong, wrong
    right = str(show(res, "a"))
    assert "✓1 amount “2,400 grams”: supported" in right and "✗" not in right.split("verdict rules")[0], right
    seed = str(show(evalkit.evaluate(df, names, EvalConfig.from_dict({"profile": "seed"}), progress=False), "b"))
    assert "✓1 number “3.1”: supported" in seed, seed  # the seed's hallucination anchors, as before
