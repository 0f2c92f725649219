from decimal import Decimal

import pytest

from evalkit.text import (NLTKTokenizer, RegexTokenizer, contains_phrase, date_supported, extract_dates,
                          extract_numbers, normalize_time, stop_words)


def keys(text):
    return [n.key for n in extract_numbers(text)]


@pytest.mark.parametrize("a,b", [("$1,200", "1200"), ("1200", "1,200.00"), ("$604", "604.00"), ("12%", "12 percent"),
                                 ("12%", "12 per cent"), ("$1.2 million", "1,200,000"), ("three", "3"), ("5k", "5,000")])
def test_same_quantity(a, b):
    assert keys(a) == keys(b)


@pytest.mark.parametrize("a,b", [("-0.133%", "0.133%"), ("12%", "12"), ("$604", "$640"), ("1.2", "12")])
def test_different_quantity(a, b):
    assert keys(a) != keys(b)


def test_negative_only_at_token_start():
    assert keys("-0.133%") == [(Decimal("-0.133"), True)]
    assert keys("(-5)") == [(Decimal(-5), False)]
    assert keys("2020-2021") == [(Decimal(2020), False)]  # a range, not minus 2021
    assert keys("Rule C-1") == []  # identifiers are not quantities
    assert keys("Q3 H2O 3rd") == []


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
