"""The grounding detector: each feature on hand-made examples, the shipped model, and its reproducibility."""
import hashlib
import subprocess
import sys

import pytest

from evalkit.metrics.anchors import default_hedges
from evalkit.metrics.grounding import (FEATURES, GROUPS, MODEL_FEATURES, MONOTONE, NOT_MODEL_INPUTS, Evidence,
                                       answer_features, grounding_risk, load_model, predict_proba, rarity)
from evalkit.metrics.grounding_substitution import substitutions
from evalkit.text.acronyms import acronym_supported
from evalkit.text.antonyms import are_antonyms
from evalkit.text.meta import meta_prefix_length

from ..conftest import BENCH, ROOT

CTX = ("The base premium for Territory 118 is $604 per year. Dr. Lena Ortiz became chief executive on June 12, 2023. "
       "Aster Dynamics acquired Corvel Sensors in November 2023. The study was not blinded.")


def feats(nlp, answer, context=CTX):
    ev = Evidence.build(context, nlp.parse_contexts([context])[0])
    return answer_features(answer, nlp.parse_answers([answer])[0], ev, default_hedges())


def test_faithful_answer_fires_nothing(nlp):
    f, per = feats(nlp, "The base premium for Territory 118 is $604 per year.")
    assert per[0]["support"] == 1.0 and per[0]["evidence"].startswith("The base premium")
    for k in ("numbers_missing_context", "dates_missing_context", "entities_missing_context", "negation_flips",
              "modality_flips", "relation_mismatch"):
        assert f[k] == 0, k


def test_alignment_picks_the_best_evidence_sentence(nlp):
    _, per = feats(nlp, "Lena Ortiz became chief executive in 2023.")
    assert per[0]["evidence"].startswith("Dr. Lena Ortiz")


def test_numbers_and_dates(nlp):
    f, per = feats(nlp, "The base premium for Territory 118 is $640 per year since June 12, 2021.")
    assert f["numbers_missing_context"] >= 1 and f["dates_missing_context"] == 1


def test_new_entities_and_proper_nouns(nlp):
    f, per = feats(nlp, "Paul Brandt became chief executive of Aster Dynamics.")
    assert "Paul Brandt" in per[0]["entities_missing"] and f["propn_missing_context"] >= 2


def test_possessive_names_match_the_context(nlp):
    # issue 13: "entities not in the context: Norwick Pumps'" although the context names Norwick Pumps
    ctx = "Norwick Pumps runs a plant in Ely. Its speed limit is 50 kilometres per hour."
    f, per = feats(nlp, "Norwick Pumps' plant is in Ely.", ctx)
    assert per[0]["entities"] == 2 and per[0]["entities_missing"] == [] and f["entities_missing_context"] == 0  # + Ely
    f, per = feats(nlp, "Paul Brandt's plant is in Ely.", ctx)  # a possessive does not hide a new name
    assert per[0]["entities_missing"] == ["Paul Brandt's"] and per[0]["propn_missing"] == ["Brandt", "Paul"]


def test_unit_letters_are_not_proper_nouns(nlp):
    # issue 13: spaCy tags the "h." of "km/h." PROPN, and it counted as a proper noun missing from the context
    f, per = feats(nlp, "Trucks are limited to 80 km/h.", "The limit for trucks is 80 kilometres per hour.")
    assert per[0]["propn_missing"] == [] and f["propn_missing_context"] == 0


def test_abstention_is_grounded():
    # issue 13: the abstention below scored 0.31 through the model
    for ctx in ([CTX], []):
        s = grounding_risk("I don't know; the documents do not mention a speed limit.", ctx)
        assert s.value == 0.0 and s.details["abstention"] is True and s.details["matched"] == ("i don't know",)
        assert s.details["reason"] == "the answer declines to answer; an abstention makes no claim to check"
    assert grounding_risk("The premium is $640.", [CTX]).details["abstention"] is False
    assert grounding_risk("No comment.", [CTX], phrases=["no comment"]).details["abstention"] is True


def test_negation_and_modality_flips(nlp):
    assert feats(nlp, "The study was blinded.")[0]["negation_flips"] == 1
    assert feats(nlp, "The study was not blinded.")[0]["negation_flips"] == 0
    assert feats(nlp, "The study might not be blinded.")[0]["modality_flips"] == 1


def test_relation_mismatch(nlp):
    # Aster Dynamics and Corvel Sensors co-occur in the context, but the relation is "acquired", not "sued"
    f, _ = feats(nlp, "Aster Dynamics sued Corvel Sensors.")
    assert f["relation_mismatch"] == 1 and f["claims_unsupported"] == 0
    f, _ = feats(nlp, "Aster Dynamics acquired Corvel Sensors.")
    assert f["relation_mismatch"] == 0


def test_rarity_weighting(nlp):
    assert rarity("the") < 0.1 < rarity("premium") < rarity("kubrick") < rarity("zzqxv") == 1.0
    rare, _ = feats(nlp, "The base premium for Territory 118 is $604 per year, said Zebulon Quaxworth.")
    common, _ = feats(nlp, "The base premium for Territory 118 is $604 per year, he said then.")
    assert rare["novel_rarity_max"] > common["novel_rarity_max"]


def test_length_and_share_features(nlp):
    f, per = feats(nlp, "The premium is $604. Bananas are yellow and cheap in winter.")
    assert f["n_sentences"] == 2 and f["unsupported_sentence_share"] == 0.5
    assert f["length_ratio"] == pytest.approx(len("The premium is 604 Bananas are yellow and cheap in winter".split())
                                              / len(CTX.replace(",", " ").split()), rel=0.2)


def test_model_file_metadata():
    m = load_model()
    assert set().union(*GROUPS.values()) == set(FEATURES)
    assert m["features"] == list(MODEL_FEATURES) and not set(m["features"]) & set(NOT_MODEL_INPUTS)
    assert "log_answer_tokens" not in m["features"] and "length_ratio" not in m["features"]  # length is no input
    assert m["monotonic_cst"] == [MONOTONE[f] for f in m["features"]]
    td = m["training_data"]
    # the support model is an input, so the rows are the development rows only (its score on the HaluEval
    # training items, which it trained on, would be in-sample)
    assert "entailment_min" in m["features"] and MONOTONE["entailment_min"] == -1
    assert len(td["sha256"]) == 64 and set(td["files"]) == {
        "halueval_qa_dev.jsonl", "halueval_dialogue_dev.jsonl", "halueval_summarization_dev.jsonl",
        "summedits_dev.jsonl"} and td["halueval_train_items"] == 0
    weights = ROOT / "evalkit" / "resources" / "support_model" / "model.safetensors"
    assert m["support_model"] == hashlib.sha256(weights.read_bytes()).hexdigest()[:12]
    assert m["seed"] == 0 and m["calibration"]["a"] > 0 and len(m["trees"]) == m["params"]["max_iter"]
    assert "calibrated_on" in m["threshold"] and "evalkit calibrate" in m["threshold"]["calibrated_on"]


def _leaf_value(tree, x):
    """One tree of the shipped JSON walked node by node (left when x[feature] <= threshold)."""
    i = 0
    while not tree["leaf"][i]:
        i = tree["left"][i] if x[tree["feature"][i]] <= tree["threshold"][i] else tree["right"][i]
    return tree["value"][i]


def test_probability_is_platt_scaled_sum_of_the_shipped_trees(nlp):
    """predict_proba against the model file read and walked here, without evalkit's vectorised raw_score:
    p = 1 / (1 + exp(-(a z + b))) with z = baseline + the leaf value of every tree."""
    import json
    import math

    model = json.loads((ROOT / "evalkit" / "resources" / "grounding_model.json").read_text())
    hallucinated, _ = feats(nlp, "The premium is $640 and Paul Brandt approved it in 2019.")
    for f in ({k: 0.0 for k in FEATURES}, feats(nlp, "The base premium for Territory 118 is $604 per year.")[0],
              hallucinated):
        x = [f[k] for k in model["features"]]
        z = model["baseline"] + sum(_leaf_value(t, x) for t in model["trees"])
        expected = 1 / (1 + math.exp(-(model["calibration"]["a"] * z + model["calibration"]["b"])))
        assert predict_proba([f])[0] == pytest.approx(expected, rel=1e-12)
    assert predict_proba([hallucinated])[0] > 0.5  # the walk reached different leaves, not one constant


def test_the_support_models_score_is_an_input():
    """entailment_min is the support metric's value for the same answer, called here on its own; the weakest
    claim it names is the evidence; an abstention runs neither."""
    from evalkit.metrics.support import support_score

    answer = "The base premium for Territory 118 is $604 per year. The study was blinded."
    s, sup = grounding_risk(answer, [CTX]), support_score(answer, [CTX])
    assert s.details["features"]["entailment_min"] == sup.value
    weakest = sup.details["sentences"][sup.details["weakest"]]
    assert s.details["entailment"] == {"support": sup.value, "claim": weakest["sentence"],
                                       "passage": weakest["window_text"]}
    off = grounding_risk("I don't know; the documents do not say.", [CTX])
    assert off.value == 0.0 and "entailment" not in off.details


def test_a_lower_entailment_raises_the_risk(nlp):
    """The trees use the input: the same lexical evidence with the support model's score at 0 instead of 1
    never lowers the risk, and raises it for an answer the lexical features do not flag."""
    f, _ = feats(nlp, "The base premium for Territory 118 is $604 per year.")
    low, high = predict_proba([{**f, "entailment_min": 0.0}, {**f, "entailment_min": 1.0}])
    assert low > high


def test_metric_output_and_empty_policy():
    s = grounding_risk("The premium is $640 and Paul Brandt approved it.", [CTX])
    assert 0 <= s.value <= 1 and any("not in the context" in f for f in s.details["fired"])
    good = grounding_risk("The base premium for Territory 118 is $604 per year.", [CTX])
    assert good.value < s.value and good.details["fired"] == ()
    assert grounding_risk("", [CTX]).value is None and grounding_risk("x", []).value is None


def test_on_the_sample_beside_the_seed_and_the_trivial_baselines(sample_results):
    """On the 84-row sample (19 positives) grounding must beat both trivial baselines; against the seed score
    the sample is too small to separate them, so the test only pins that grounding is not worse by more than
    the gap one row makes (1 / (19 * 65) of AUC per swapped pair; 0.03 is about 37 pairs)."""
    import evalkit
    from sklearn.metrics import roc_auc_score

    base = evalkit.evaluate(sample_results[["id", "system", "question", "contexts", "answer"]],
                            ["answer_length", "novel_token_rate"], progress=False)
    y = sample_results["hallucinated"].astype(bool)
    auc = {m: roc_auc_score(y, sample_results[m].astype(float)) for m in ("grounding_risk", "hallucination")}
    auc.update({m: roc_auc_score(y, base[m].astype(float)) for m in ("answer_length", "novel_token_rate")})
    assert auc["grounding_risk"] > max(auc["answer_length"], auc["novel_token_rate"]) + 0.1
    assert auc["grounding_risk"] > auc["hallucination"] - 0.03


@pytest.mark.slow  # minutes of training: outside the default run (pytest -m slow), never under a time limit
@pytest.mark.skipif(not BENCH.exists(), reason="../shared/bench not present")
def test_training_script_reproduces_the_shipped_model():
    r = subprocess.run([sys.executable, "train_grounding.py", "--check", "--resamples", "1000"], cwd=ROOT / "benchmarks",
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "reproduced byte for byte: True" in r.stdout


def test_training_scripts_feature_hash_reads_files_that_exist():
    """The slow reproduction check above hashes the feature code to key its cache; a moved module (evalkit/nlp.py
    went to evalkit/base/) broke it unseen, so the files it hashes are checked in the default run."""
    code = ("import sys; sys.path.insert(0, '.'); import train_grounding as t; h = t.feature_code_sha256(); "
            "print(len(h))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT / "benchmarks", capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "64", r.stderr[-2000:]


def test_alignment_prefers_a_sentence_to_an_equally_close_title():
    """A title shares the company's name with every claim about it and says none of them: of the sentences that
    cover as many of an answer sentence's content words, the detector checks the first that is not a heading."""
    ctx = ["Aster Dynamics Annual Report 2023. Revenue reached $1.2 billion in fiscal 2023. "
           "The company employs 4,870 people across 14 countries."]
    s = grounding_risk("Aster Dynamics had a record year: revenue doubled to $2.4 billion.", ctx)
    (sent,) = s.details["sentences"]
    # content words aster, dynamics, record, year, revenue, doubled, 2.4, billion: the title covers aster and
    # dynamics, the revenue sentence revenue and billion (2 of 8 each: support 0.25)
    assert sent["evidence"] == "Revenue reached $1.2 billion in fiscal 2023." and sent["support"] == 0.25
    assert sent["numbers_missing_evidence"] == 1  # $2.4 billion is checked against the revenue sentence


def test_an_answer_sentence_sharing_no_word_with_the_contexts_shows_no_closest_sentence():
    from evalkit.metrics.grounding import aligned_sentence_evidence

    s = grounding_risk("Our cafeteria serves lunch from noon to 2 pm.",
                       ["Section 5, Rating Rules. Rule C-1 applies a factor of 1.12 to dwellings."])
    assert s.details["sentences"][0]["support"] == 0.0
    assert aligned_sentence_evidence(s.details, "grounding_risk").aligned[0].evidence == ""


def test_embedding_alignment_option(encoder):
    ctx = ["The quarterly dividend rose to $0.13 per share. The weather in Houston was mild."]
    lex = grounding_risk("The payout per share went up to $0.13.", ctx)
    emb = grounding_risk("The payout per share went up to $0.13.", ctx, align="embedding")
    assert emb.details["align"] == "embedding" and lex.details["align"] == "lexical"
    assert emb.details["sentences"][0]["evidence"].startswith("The quarterly dividend")
    with pytest.raises(ValueError, match="align must be"):
        grounding_risk("x", ctx, align="semantic")


# --- issue 18: preambles, equivalences, substitutions, monotonicity -----------------------------------------

def test_preamble_sentence_is_not_a_claim(nlp):
    f, per = feats(nlp, "Here is a concise summary of the passage. The base premium for Territory 118 is $604 per year.")
    assert f["meta_sentences"] == 1 and len(per) == 1 and per[0]["sentence"].startswith("The base premium")
    assert f["unsupported_sentence_share"] == 0.0 and f["novel_token_rate"] == 0.0  # the preamble's words left out
    f, per = feats(nlp, "Here is a concise summary of the passage.")
    assert f["meta_sentences"] == 1 and per == []


def test_framed_sentence_scores_only_its_content(nlp):
    f, per = feats(nlp, "The passage discusses how Aster Dynamics acquired Corvel Sensors in November 2023.")
    assert per[0]["sentence"] == "Aster Dynamics acquired Corvel Sensors in November 2023."
    assert per[0]["support"] == 1.0 and f["meta_sentences"] == 0
    assert meta_prefix_length("Here is a summary of the call: revenue rose.") == len("Here is a summary of the call: ")
    assert meta_prefix_length("The passage was found in a cave.") == 0  # "passage" as a subject, no frame verb


def test_abbreviations_and_number_formats_count_as_support(nlp):
    ctx = "Mining output in Western Australia rose by 5 million tonnes, the National Health Service said."
    f, per = feats(nlp, "Mining output in WA rose by 5 mln tonnes, the NHS said.", ctx)
    assert per[0]["entities_missing"] == [] and per[0]["propn_missing"] == [] and f["numbers_missing_context"] == 0
    assert per[0]["substitutions"] == []  # an abbreviation is not a replaced word
    f, per = feats(nlp, "Mining output in Queensland rose by 6 mln tonnes, the NHS said.", ctx)
    assert per[0]["entities_missing"] == ["Queensland"] and f["numbers_missing_context"] == 1
    assert acronym_supported("U.S.", "the United States of America") and not acronym_supported("UK", "Western Australia")


SUB_CTX = ("Sales increased by 12 percent in the first quarter. The coach praised the striker after three weeks in "
           "Leeds. The team thanked its fans.")


@pytest.mark.parametrize("answer, kind, replaced", [
    ("Sales decreased by 12 percent in the first quarter.", "sub_antonym", "increased -> decreased (antonym)"),
    ("Sales increased by 15 percent in the first quarter.", "sub_number", "12 -> 15 (number)"),
    ("The coach praised the striker after three weeks in York.", "sub_entity", "leeds -> york (entity)"),
    ("The coach praised the fans after three weeks in Leeds.", "sub_doc_word", "striker -> fans (doc_word)"),
    ("The coach praised the goalkeeper after three weeks in Leeds.", "sub_other", "striker -> goalkeeper (other)"),
])
def test_substitution_kinds(nlp, answer, kind, replaced):
    f, per = feats(nlp, answer, SUB_CTX)
    assert per[0]["substitutions"] == [replaced]
    assert f[kind] == 1 and sum(f[k] for k in FEATURES if k.startswith("sub_")) == 1


def test_faithful_and_paraphrased_sentences_have_no_substitution(nlp):
    for answer in ("Sales increased by 12 percent in the first quarter.",
                   "In the first quarter, sales grew 12 percent."):  # paraphrase: no word kept on both sides
        f, per = feats(nlp, answer, SUB_CTX)
        assert per[0]["substitutions"] == [], answer
    assert substitutions("A team won.", set(), "The team won.", set()) == []  # function words only
    assert are_antonyms("boys", "girls") and not are_antonyms("rose", "climbed")


def test_substituted_antonym_raises_the_risk():
    faithful = grounding_risk("Sales increased by 12 percent in the first quarter.", [SUB_CTX])
    swapped = grounding_risk("Sales decreased by 12 percent in the first quarter.", [SUB_CTX])
    assert swapped.details["features"]["sub_antonym"] == 1 and faithful.details["features"]["sub_antonym"] == 0
    assert swapped.value > faithful.value
    assert any("increased -> decreased (antonym)" in r for r in swapped.details["fired"])


def test_adding_an_unsupported_number_never_lowers_the_risk():
    base = "The base premium for Territory 118 is $604 per year."
    more = "The base premium for Territory 118 is $604 per year, and 2,750 drivers pay it."
    s0, s1 = grounding_risk(base, [CTX]), grounding_risk(more, [CTX])
    assert s1.details["features"]["numbers_missing_context"] == s0.details["features"]["numbers_missing_context"] + 1
    assert s1.value >= s0.value


def test_model_is_monotone_in_every_evidence_feature(nlp):
    """The constraint, checked on the shipped model: for answers of every kind, one more unit of an evidence
    feature (+1) or one unit less of a support feature (-1) never lowers the probability; by construction of
    the monotonic constraints, not by any value the model outputs."""
    answers = ["The base premium for Territory 118 is $604 per year.", "The premium is $640 and Paul Brandt approved it.",
               "Aster Dynamics sued Corvel Sensors in 2019.", "The study might not be blinded."]
    for a in answers:
        f = feats(nlp, a)[0]
        p0 = predict_proba([f])[0]
        for name, sign in MONOTONE.items():
            if sign == 0:
                continue
            for step in (0.05, 0.25, 1.0):
                moved = {**f, name: f[name] + sign * step}
                assert predict_proba([moved])[0] >= p0 - 1e-12, (a, name, step)
