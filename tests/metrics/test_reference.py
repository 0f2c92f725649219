import pytest

from evalkit.metrics.base import Score
from evalkit.metrics.reference import (answer_completeness, dont_know, exact_match, expected_keywords,
                                       keyword_coverage, number_match, source_citation)

def test_exact_match_normalises_case_and_whitespace():
    assert exact_match("The  Answer\nis 42", "the answer is 42").value is True
    assert exact_match("The answer is 42.", "the answer is 42").value is False
    # issue 25: an empty answer is a failure of the system, undetermined in every metric (was False)
    assert exact_match(None, "x").value is None and exact_match(None, "x").details["reason"] == "empty answer"
    assert exact_match("x", None).value is None


def test_keywords_extraction_rules():
    kw = expected_keywords("Territory 118 pays $604, a 0.305% increase under Rule C-1 in Chicago. Base rates 293.")
    assert kw["phrases"] == ["Territory 118", "Rule C-1", "Chicago"]
    assert kw["numbers"] == ["$604", "0.305%", "293"]
    assert kw["words"] == ["pays", "increase", "base", "rates"]  # 4+ chars, not stop words


def test_sentence_initial_word_is_not_a_phrase():
    kw = expected_keywords("Revenue rose. Margins fell in Paris.")
    assert kw["phrases"] == ["Paris"] and "revenue" in kw["words"] and "margins" in kw["words"]


def test_keyword_coverage_worked_example():
    s = keyword_coverage("Territory 118 pays 604 dollars.", "Territory 118 pays $604, a 0.305% increase.")
    # expected: Territory 118, $604, 0.305%, pays, increase -> matched 3 of 5
    assert s.value == pytest.approx(3 / 5)
    assert s.details["matched"] == ("Territory 118", "$604", "pays")
    assert s.details["missing"] == ("0.305%", "increase")


def test_keyword_coverage_policies():
    assert keyword_coverage("x", None).value is None
    assert keyword_coverage("x", "It is.").value == 1.0


@pytest.mark.parametrize("answer,gt,value", [
    ("It costs 604", "$604", 1.0), ("It costs 604.00", "$604", 1.0), ("It costs $604", "604", 1.0),
    ("Change: 0.133%", "-0.133%", 0.0), ("Change: -0.133%", "-0.133%", 1.0), ("1,200 and 12 percent", "$1,200 and 12%", 1.0),
    ("1200", "1,200.50", 0.0), ("-5", "5", 0.0), ("$604 and 7%", "$604, 7% and $75", 2 / 3),
])
def test_number_match(answer, gt, value):
    assert number_match(answer, gt).value == pytest.approx(value)


def test_number_match_undetermined_without_numbers():
    s = number_match("anything", "No numbers here.")
    assert s.value is None and "no numbers" in s.details["reason"]


def test_answer_completeness_worked_example():
    # gt 7 words, answer 5 words -> ratio 5/7; keyword coverage 3/5
    s = answer_completeness("Territory 118 pays 604 dollars.", "Territory 118 pays $604, a 0.305% increase.")
    assert s.value == pytest.approx((5 / 7 + 3 / 5) / 2)
    long = answer_completeness("word " * 50, "Territory 118 pays $604.")
    assert long.details["length_ratio"] == 1.0


@pytest.mark.parametrize("text,found", [
    ("According to the PDF on page 3", ["page", "pdf", "according to"]),
    ("Source: Table: 4", ["source:", "table:"]),
    ("Based on the document.", ["document", "based on"]),
    ("Taken from the manual.", ["from"]),
    ("The pages of fromage pdfs in the documentation", []),  # substrings of other words do not count
])
def test_source_citation_whole_words(text, found):
    s = source_citation(text)
    assert s.details["found"] == tuple(found) and s.value == pytest.approx(min(len(found) / 3, 1))


@pytest.mark.parametrize("text,expected", [
    ("I don't know.", True), ("I don’t know", True), ("I do not know the answer", True), ("Not sure.", True),
    ("The value is unknown.", True), ("There is no information about that.", True), ("N/A", True), ("none", True),
    ("null", True), ("The premium is $604.", False),
    ("None of the rules apply to wood stoves, so the standard rate of $604 holds.", False),
    ("I know the answer: 42.", False),
    ("I don't know; the documents do not mention a speed limit.", True),
    # issue 13: substrings of short answers and phrases inside real answers fired
    ("Annulled.", False), ("Nonexempt", False), ("Unknowns", False),
    ("The discount is not available in Territory 118; the premium is $604.", False),
])
def test_dont_know(text, expected):
    assert dont_know(text).value is expected


def test_dont_know_explains_a_phrase_that_does_not_decline():
    s = dont_know("I don't know, but the premium is $604.")
    assert s.value is False and s.details["matched"] == ("i don't know",)
    assert s.details["reason"] == "an uncertainty phrase occurs, but the answer also makes a substantive claim"
    # issue 25: an empty answer is undetermined, not a non-answer (the seed said True)
    for empty in ("", None, "   "):
        assert dont_know(empty) == Score(None, {"reason": "empty answer"})
    assert source_citation("") == Score(None, {"reason": "empty answer"})  # was 0.0


def test_dont_know_agrees_with_declines_to_answer():
    from evalkit.text import declines_to_answer

    for a in ("Sorry, I don't know.", "Unknowns", "None.", "The premium is unknown; it was $604 last year."):
        assert (dont_know(a).value, list(dont_know(a).details["matched"])) == declines_to_answer(a)


def test_dont_know_phrases_configurable():
    assert dont_know("No comment.", phrases=["no comment"]).value is True
    assert dont_know("I don't know.", phrases=["no comment"]).value is False
    assert dont_know("Nope.", short_tokens=["nope"]).value is True
    # "it is fine" is a claim, so the answer answers
    assert dont_know("Nope, it is fine.", short_tokens=["nope"], short_chars=100).value is False


def test_number_match_reads_both_ends_of_a_range():
    # issue 13: "5-10" lost its upper end, so this was 0.5
    assert number_match("Between 5-10 years.", "5 to 10 years").value == 1.0
    assert number_match("5 m", "5m").value == 1.0  # was 0.0: "5m" read as 5,000,000


def test_keyword_coverage_reads_range_ends_in_context():
    # an answer identical to its reference covers every keyword; the lower end of "5-10%" is 5 percent
    s = keyword_coverage("Costs fell 5-10% in 2020-2021.", "Costs fell 5-10% in 2020-2021.")
    assert s.value == 1.0 and s.details["missing"] == ()
    # by hand: keywords 5, 10%, 2020, 2021, costs, fell -> the answer has 5%, 2020, costs, fell = 4 of 6
    s = keyword_coverage("Costs fell 5% in 2020.", "Costs fell 5-10% in 2020-2021.")
    assert s.value == 4 / 6 and sorted(s.details["missing"]) == ["10%", "2021"]
