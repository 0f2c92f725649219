from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from evalkit.text import (NLTKTokenizer, RegexTokenizer, contains_phrase, date_supported, declines_to_answer,
                          extract_dates, extract_numbers, find_entity, normalize_entity, normalize_time, stop_words)

GOLDEN = yaml.safe_load((Path(__file__).parent / "golden" / "normaliser.yaml").read_text(encoding="utf-8"))


def keys(text):
    return [n.key for n in extract_numbers(text)]


def test_golden_table_is_large_enough():
    cases = sum(len(GOLDEN[k]) for k in ("numbers", "dates", "same", "different", "entity_keys", "entities"))
    assert len(GOLDEN["numbers"]) >= 60 and cases >= 100


@pytest.mark.parametrize("case", GOLDEN["numbers"], ids=[c["text"] for c in GOLDEN["numbers"]])
def test_golden_numbers(case):
    assert [str(n) for n in extract_numbers(case["text"])] == case["values"], case["rule"]


@pytest.mark.parametrize("case", GOLDEN["dates"], ids=[c["text"] for c in GOLDEN["dates"]])
def test_golden_dates(case):
    assert [list(d.key) for d in extract_dates(case["text"])] == case["keys"], case["rule"]


@pytest.mark.parametrize("a,b", GOLDEN["same"])
def test_golden_same_quantities(a, b):
    assert set(keys(a)) == set(keys(b)) and keys(a)


@pytest.mark.parametrize("a,b", GOLDEN["different"])
def test_golden_different_quantities(a, b):
    assert set(keys(a)) != set(keys(b))


@pytest.mark.parametrize("case", GOLDEN["entity_keys"], ids=[c["name"] for c in GOLDEN["entity_keys"]])
def test_golden_entity_keys(case):
    assert normalize_entity(case["name"]) == case["key"]


@pytest.mark.parametrize("case", GOLDEN["entities"], ids=[f"{c['name']}|{c['text']}" for c in GOLDEN["entities"]])
def test_golden_entities(case):
    assert (find_entity(case["name"], case["text"]) is not None) is case["found"]


def test_entity_offsets_index_the_text():
    text = "Plant of Norwick Pumps' subsidiary"
    assert find_entity("Norwick Pumps", text) == (9, 23)  # "Norwick Pumps'" with its possessive
    assert find_entity("h.", "50 km/h.") is None and find_entity(None, "x") is None and find_entity("Ely", None) is None


@pytest.mark.parametrize("a,b", [("$1,200", "1200"), ("1200", "1,200.00"), ("$604", "604.00"), ("12%", "12 percent"),
                                 ("12%", "12 per cent"), ("$1.2 million", "1,200,000"), ("three", "3"), ("$5k", "5,000")])
def test_same_quantity(a, b):
    assert keys(a) == keys(b)


@pytest.mark.parametrize("a,b", [("-0.133%", "0.133%"), ("12%", "12"), ("$604", "$640"), ("1.2", "12")])
def test_different_quantity(a, b):
    assert keys(a) != keys(b)


def test_negative_only_at_token_start():
    assert keys("-0.133%") == [(Decimal("-0.133"), True)]
    assert keys("(-5)") == [(Decimal(-5), False)]
    assert keys("2020-2021") == [(Decimal(2020), False), (Decimal(2021), False)]  # a range: both ends, no minus
    assert keys("Rule C-1") == []  # identifiers are not quantities
    assert keys("Q3 H2O 3rd") == []


def test_ranges_keep_their_upper_end():
    # issue 13: an ASCII hyphen after a number dropped the upper end ([2020, 5])
    assert [str(n) for n in extract_numbers("2020-2021, 5-10%")] == ["2020", "2021", "5%", "10%"]


def test_single_letter_scales_need_a_currency():
    # issue 13: "5m" was 5,000,000 and "section 3b" / "Form 2B" were billions
    assert keys("5m") == keys("5 m") == [(Decimal(5), False)]
    assert keys("$5m") == [(Decimal(5_000_000), False)]
    assert keys("section 3b") == keys("Form 2B") == []


def test_units_are_recorded_outside_the_key():
    (n,) = extract_numbers("5km/h")
    assert n.unit == "km" and n.key == (Decimal(5), False) and n.text == "5km"


def test_huge_and_fractional_values_stay_exact():
    (n,) = extract_numbers("1" + "0" * 40)
    assert n.value == Decimal(10) ** 40
    (third,) = extract_numbers("1/3")
    assert third.value == Decimal(1) / Decimal(3)


def test_numbers_positions_and_text():
    ns = extract_numbers("Premium $604 (-0.133%)")
    assert [n.text for n in ns] == ["$604", "-0.133%"] and ns[0].currency == "$"


@pytest.mark.parametrize("text,key", [
    ("March 2021", (2021, 3, None)), ("2021-03", (2021, 3, None)), ("March 3, 2021", (2021, 3, 3)),
    ("3 March 2021", (2021, 3, 3)), ("3rd of March, 2021", (2021, 3, 3)), ("2021-03-03", (2021, 3, 3)),
    ("3/15/2021", (2021, 3, 15)), ("Sept. 2020", (2020, 9, None)), ("in 1847", (1847, None, None)),
])
def test_date_formats(text, key):
    assert extract_dates(text)[0].key == key


def test_may_as_modal_is_not_a_date():
    assert extract_dates("you may 5 times") == []


def test_date_support_rules():
    assert date_supported((2021, 3, None), [(2021, 3, 3)])  # "March 2021" vs "March 3, 2021"
    assert date_supported((2021, 3, 3), [(2021, 3, 3)])  # "March 3, 2021" vs "3 March 2021"
    assert not date_supported((2021, 3, 3), [(2021, 3, None)])  # more specific than the evidence
    assert not date_supported((2021, 4, None), [(2021, 3, 3)])


def test_times():
    assert normalize_time("3:30 pm") == (15, 30) and normalize_time("15:30") == (15, 30)
    assert normalize_time("12 am") == (0, 0) and normalize_time("in 5 days") is None


def test_tokenizers_agree_on_words():
    text = "The premium for Territory 118 is $604."
    assert RegexTokenizer().tokenize(text) == ["the", "premium", "for", "territory", "118", "is", "604"]
    assert NLTKTokenizer().tokenize(text) == ["the", "premium", "for", "territory", "118", "is", "604"]


def test_stop_word_lists_ship_with_packages():
    assert "the" in stop_words("sklearn") and "the" in stop_words("spacy")
    with pytest.raises(ValueError):
        stop_words("nltk")


def test_phrase_whole_words():
    assert contains_phrase("See page 3", "page") and not contains_phrase("See pages 3", "page")
    assert contains_phrase("Source: the manual", "source:") and contains_phrase("rose 6%", "%")


# ---------------------------------------------------------------------------
# declines_to_answer: hand-written cases, each labelled by reading the answer as a whole
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("answer,declines,matched", [
    ("I don't know.", True, ["i don't know"]),
    ("I don\u2019t know", True, ["i don't know"]),  # curly apostrophe
    ("I don\u02bct know", True, ["i don't know"]),  # modifier-letter apostrophe
    ("\uff29 don't know.", True, ["i don't know"]),  # full-width I (NFKC)
    ("I dont know", True, ["i dont know"]),
    ("Not sure.", True, ["not sure"]),
    ("I'm not sure.", True, ["not sure"]),
    ("Sorry, I don't know.", True, ["i don't know"]),
    ("I don't know; the documents do not mention a speed limit.", True, ["i don't know"]),
    ("Based on the context, I cannot answer.", True, ["cannot answer"]),
    ("I don't know; please consult your agent.", True, ["i don't know"]),
    ("Hmm, I'm not sure. Would you like to learn more about Somewhere, or other comedies?", True, ["not sure"]),
    ("There is no information about that.", True, ["no information"]),
    ("The value is unknown.", True, ["unknown"]),
    ("The information about Territory 118 is not available.", True, ["not available"]),
    ("Unknown.", True, ["unknown"]),
    ("None.", True, ["none"]),
    ("N/A", True, ["n/a"]),
    ("null", True, ["null"]),
    # substrings of other words are not phrases
    ("Annulled.", False, []),
    ("Nonexempt", False, []),
    ("Unknowns", False, []),
    # a phrase inside an answer that answers
    ("The discount is not available in Territory 118; the premium is $604.", False, []),
    ("The discount is not available in Territory 118.", False, []),
    ("I don't know, but the premium is probably $604.", False, ["i don't know"]),
    ("I'm not sure; the policy does not cover flood damage.", False, ["not sure"]),
    ("None of the rules apply to wood stoves, so the standard rate of $604 holds.", False, []),
    ("I know the answer: 42.", False, []),
    ("The premium is $604.", False, []),
    ("I'm not sure; it is two.", False, ["not sure"]),  # a number word is a claim, not a filler
    ("I don't know; the system is on fire.", False, ["i don't know"]),  # stop-list words with content
    ("Is it Paris? I don't know, the capital is Lyon.", False, ["i don't know"]),  # only a question asserts nothing
    # missing is not declining
    ("", False, []), ("   ", False, []), (None, False, []), ("...", False, []),
])
def test_declines_to_answer(answer, declines, matched):
    assert declines_to_answer(answer) == (declines, matched)


def test_short_tokens_only_in_short_answers():
    # "None apply." has 11 characters: at the default limit of 10 it is not short, at 12 it is
    assert declines_to_answer("None apply.") == (False, [])
    assert declines_to_answer("None apply.", short_chars=12) == (True, ["none"])
    assert declines_to_answer("None.", short_chars=5) == (False, [])  # 5 characters: not under 5
    assert declines_to_answer("None.", short_chars=6) == (True, ["none"])


def test_declining_lists_are_arguments():
    assert declines_to_answer("No comment.", phrases=["no comment"]) == (True, ["no comment"])
    assert declines_to_answer("I don't know.", phrases=["no comment"]) == (False, [])
    assert declines_to_answer("N/A", short_tokens=[]) == (False, [])


def test_stems_are_right_from_threads_scoring_side_by_side():
    """A Snowball stemmer object keeps the word it works on: one shared by threads (``aevaluate``, a threaded
    Dask worker) raised IndexError or returned another word's stem. Each thread has its own; with a thread switch
    forced every microsecond, eight threads get what one thread gets."""
    import sys
    from concurrent.futures import ThreadPoolExecutor

    import snowballstemmer

    from evalkit.text.tokens import stem

    words = [w + "x" * (i % 13) + "ing" for i, w in enumerate(["running", "retries", "generalizations"] * 3000)]
    expected = [snowballstemmer.stemmer("english").stemWord(w) for w in words]
    stem.cache_clear()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(stem, words))
    finally:
        sys.setswitchinterval(interval)
        stem.cache_clear()
    assert got == expected


def test_english_that_lingua_calls_english_quickly_leaves_the_full_models_unloaded():
    """lingua's full n-gram models take ~7 s to load; its low-accuracy mode ~0.3 s. An answer the quick mode calls
    English with at least ``quick_english`` is English without the full models (a 5-row run paid 5-7 s for them);
    one it does not goes to the full detector, which still names the language (in a fresh process, so no other
    test's call has loaded them)."""
    import json
    import subprocess
    import sys

    probe = ("import json; from evalkit.text import language as L; "
             "a = L.detect_language('territory covers the lakeshore codes and').code; "
             "n = L._detector.cache_info().currsize; "
             "b = L.detect_language('El filtro debe cambiarse cada seis meses.').code; "
             "print(json.dumps([a, n, b, L._detector.cache_info().currsize]))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == ["en", 1, "es", 2]
