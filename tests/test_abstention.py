"""The row decision (issue 25): the abstention detector on its golden corpus, the language guard, and
:func:`evalkit.text.decide_answer` (evalkit/text/abstention.py, evalkit/text/language.py)."""
from pathlib import Path

import pytest
import yaml

from evalkit.text import AnswerDecision, decide_answer, declines_to_answer, detect_language

GOLDEN = Path(__file__).parent / "golden" / "abstention.yaml"


@pytest.fixture(scope="module")
def corpus():
    doc = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
    assert all(isinstance(a, str) for k in ("refusals", "answers") for a in doc[k]), "one quoted string a line"
    return doc


def test_golden_corpus_size(corpus):
    assert len(corpus["refusals"]) >= 150 and len(corpus["answers"]) >= 150
    assert len(set(corpus["refusals"])) == len(corpus["refusals"]) and len(set(corpus["answers"])) == len(corpus["answers"])


def test_golden_corpus_recall_and_false_abstentions(corpus):
    missed = [a for a in corpus["refusals"] if not declines_to_answer(a)[0]]
    false = [(a, declines_to_answer(a)[1]) for a in corpus["answers"] if declines_to_answer(a)[0]]
    recall = 1 - len(missed) / len(corpus["refusals"])
    false_rate = len(false) / len(corpus["answers"])
    print(f"\nabstention golden corpus: recall {recall:.3f} ({len(corpus['refusals']) - len(missed)}/"
          f"{len(corpus['refusals'])}), false abstentions {false_rate:.3f} ({len(false)}/{len(corpus['answers'])})")
    for a in missed:
        print("  missed refusal:", a)
    for a, matched in false:
        print("  false abstention:", a, matched)
    assert recall >= 0.95, missed
    assert false_rate <= 0.02, false


@pytest.mark.parametrize("answer", [
    "The provided context does not contain information about the speed limit.",
    "The documents do not say.",
    "I can't find that in the documentation.",
    "I'm sorry, I couldn't find information about gift card refunds in our documentation.",
])
def test_the_issues_refusals_decline(answer):
    assert declines_to_answer(answer)[0] is True


@pytest.mark.parametrize("answer,says", [
    ("Unfortunately, the guidance provided doesn't state a retention period for receipts and invoices.", False),
    ("The help docs don't mention a file size limit for uploads.", False),
    ("The guidance says to keep receipts for 10 years.", True),
    ("Follow the guidelines and do not state your password in an email.", True),
])
def test_guidance_and_help_docs_are_documents_that_may_be_silent(answer, says):
    assert declines_to_answer(answer)[0] is not says


@pytest.mark.parametrize("answer", [
    "We study the effect of unknown words on translation.",
    "The unknown soldier memorial was built in 1921.",
    "The cause remains unknown, but power was restored at 6 pm.",
    "The manual does not say to remove the cover before cleaning.",
])
def test_refusal_words_in_an_answer_do_not_decline(answer):
    assert declines_to_answer(answer)[0] is False


@pytest.mark.parametrize("answer", [  # review: each matched a decline shape
    "Nothing in the manual prohibits it.",
    "I could not find a better option than the premium plan.",
    "The passage does not contain any errors.",
    "There is no way to know the password once it is hashed.",
    "We cannot provide refunds after 30 days.",
    "I could not find the information desk, so I asked a guard.",
])
def test_a_thing_not_found_is_not_a_decline(answer):
    assert declines_to_answer(answer) == (False, [])


@pytest.mark.parametrize("answer,shape", [  # the same shapes still decline about information or the documents
    ("Nothing in the manual mentions it.", "nothing in the manual"),
    ("There is nothing in the manual about the warranty.", "nothing in the manual"),
    ("I could not find a figure for rainfall in the documents.", "i could not find"),
    ("I could not find the requested information.", "i could not find"),
    ("Based on the context, I cannot tell you the 2020 figures.", "i cannot tell"),
    ("The passage does not contain any information about errors.", "passage does not contain"),
    ("The knowledge base does not have anything on that.", "knowledge base does not have"),
    ("There is no way to know from the passages.", "there is no way to know"),
    ("It is impossible to say who won.", "impossible to say"),
])
def test_information_not_found_is_a_decline(answer, shape):
    assert declines_to_answer(answer) == (True, [shape])


@pytest.mark.parametrize("answer,shape", [  # #38: the refusal forms of the verdict corpus's development part
    ("Sorry, the opening hours aren't listed.", "are not listed"),          # "listed" with nothing after it
    ("The fees are not listed anywhere.", "are not listed"),
    ("The policy doesn't mention it.", "policy does not mention"),          # a policy silent: say, mention
    ("The terms do not specify a refund period.", "terms do not specify"),
    ("Unfortunately, I don't have fee information for that portfolio size.", "i do not have fee information"),
])
def test_a_silent_policy_an_unlisted_thing_and_missing_named_information_decline(answer, shape):
    assert declines_to_answer(answer) == (True, [shape])


@pytest.mark.parametrize("answer", [  # ... and what a policy rules, or a list says of a thing, stays an answer
    "The policy does not cover floods.",
    "Our rules don't allow dogs on the upper deck.",
    "The policy doesn't say to book early.",                               # an instruction, not silence
    "The policy does not mention a fee, but the charge is £5.",            # a decline followed by a fact
    "Sundays aren't listed as opening days.",                              # something follows "listed"
    "The KT-40 isn't listed.",                                             # it names an item
    "Breakfast isn't included.",
])
def test_what_a_policy_rules_and_what_a_list_says_are_answers(answer):
    assert declines_to_answer(answer)[0] is False


def test_a_shape_is_the_reason_when_no_phrase_matched():
    assert declines_to_answer("The documents do not say.") == (True, ["documents do not say"])
    assert declines_to_answer("Sorry, I don't know.") == (True, ["i don't know"])  # the configured phrase first


# ---------------------------------------------------------------------------------------------------------
# the language guard
@pytest.mark.parametrize("text,code", [
    ("Die Werke befinden sich in Gent und Lyon und wurden 1990 gebaut.", "de"),
    ("Die Versicherung kostet 604 Euro pro Jahr.", "de"),
    ("La prime de base pour le territoire 118 est de 604 dollars par an.", "fr"),
    ("La prima básica para el territorio 118 es de 604 dólares al año.", "es"),
    ("De premie is 604 euro per jaar.", "nl"),
    ("第118区的基本保费为每年604美元。", "zh"),
    ("基本保険料は年間604ドルです。", "ja"),
    ("Базовая премия составляет 604 доллара в год.", "ru"),
    ("القسط الأساسي هو 604 دولارات سنويا.", "ar"),
    ("The base premium for Territory 118 is $604 per year.", "en"),
    ("The plants are in Tilburg, Antwerp and Paris.", "en"),
    ("José Núñez was born in São Paulo in 1990 and moved to Zürich.", "en"),  # names are not a language
    ("Le Monde reported that Jean-Paul Sartre died in 1980.", "en"),
    # HaluEval answers once called French and German: names with particles and accents
    ("Grégory Levasseur produced the 2003 horror film starring Cécile de France.", "en"),
    ("Klemens von Metternich and Richard von Metternich represented different countries.", "en"),
    ("The café serves crêpes, and the crème brûlée is excellent.", "en"),
])
def test_detect_language(text, code):
    assert detect_language(text).code == code


@pytest.mark.parametrize("text", [  # review: each was called Greek, German, Portuguese, French or Spanish
    "μ = 3.2, σ = 1.1",            # letters standing alone are symbols
    "π ≈ 3.14159",
    "The Greek letter α is used for angles, and β for the second one.",
    "Men die in war.",             # "die", "war" are German words too, but two function words are not enough
    "José Núñez won. María López came second. Ramón Pérez was third.",  # names at a sentence's start
    "Our menu has crème brûlée, café au lait, pâté and rosé.",          # 6 French words, 3 English ones
    "Paella de marisco con arroz is a dish from Valencia.",
])
def test_english_with_foreign_symbols_names_and_dishes_is_english(text):
    assert detect_language(text).english


@pytest.mark.parametrize("text,code", [  # ... while real sentences are still named
    ("Die Werke befinden sich in Gent und Lyon.", "de"),
    ("Die Versicherung kostet 604 Euro pro Jahr.", "de"),  # two hits, one a German ending
    ("保险费每年604美元。", "zh"),                              # seven Han characters are a sentence
    ("Москва — столица России, крупнейший город страны.", "ru"),
    ("Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.", "el"),
])
def test_real_sentences_are_still_named(text, code):
    assert detect_language(text).code == code


@pytest.mark.parametrize("short", ["42", "Paris.", "Yes.", "No", "$604", "Tilburg and Ghent.", "In 2021.",
                                   "N/A", "Die Hard", "", None, "   ", "3.14"])
def test_short_answers_are_never_called_non_english(short):
    guess = detect_language(short)
    assert guess.english and guess.code in (None, "en")


def test_decide_answer():
    assert decide_answer(None) == decide_answer("") == decide_answer(" \n") == AnswerDecision(True)
    d = decide_answer("I can't find that in the documentation.")
    assert (d.empty, d.abstained, d.english, d.skip_reason()) == (False, True, True, None)
    assert d.abstained_reason == "declines: i cannot find"  # the shape, contractions written out
    d = decide_answer("第118区的基本保费为每年604美元。")
    assert (d.abstained, d.language, d.skip_reason(), d.skip_reason(english_only=False)) == \
        (False, "zh", "not English (detected: zh)", None)
    assert decide_answer("").skip_reason(english_only=False) == "empty answer"


def test_decision_round_trips_through_its_columns():
    for d in (AnswerDecision(True), decide_answer("The documents do not say."), decide_answer("Die Werke sind in Gent."),
              decide_answer("The premium is $604.")):
        assert AnswerDecision.from_columns(d.to_columns()) == AnswerDecision(d.empty, d.abstained,
                                                                             d.matched if d.abstained else (),
                                                                             d.language)
    assert AnswerDecision.from_columns({"answer": "x"}) is None


@pytest.mark.parametrize("answer", [
    "The leaflet doesn't give the fee for a replacement card. It only says cards are replaced within 5 working days, "
    "so you'd need to ask at the desk.",
    "The guide doesn't state the charge. It only says charges vary by fund and are listed in the annual statement, "
    "so I can't give you a figure.",
    "I can't find a noise level in the manual excerpts provided. They describe a quiet mode that halves the speed to "
    "150 mm/s, but no dB figure is given.",
    "I'm sorry, but the manual extracts I have don't give the flow rate. They list an output of 28 kW and say the "
    "temperature can be set between 40 °C and 64 °C. For the flow rate, check the technical data sheet.",
    "The documents don't mention a student discount. What they do cover is pricing: Off-Peak is £22.99 a month and "
    "Standard £34.99. It may be worth asking at reception.",
    "Unfortunately the extracts don't say whether a visa can be extended in-country. They only give the 90-day limit "
    "and, separately, note that a V-2 can't be converted. The immigration office would be the best place to confirm "
    "this.",
])
def test_a_decline_that_reports_what_the_documents_say_instead(answer):
    """A decline followed by what the documents do say ("It only says ...", or "They describe ..., but no figure
    is given") and a referral ("you'd need to ask at the desk") declines: the report answers nothing asked."""
    assert decide_answer(answer).abstained


@pytest.mark.parametrize("answer", [
    "The documents say the premium is $604.",
    "The leaflet doesn't give the fee online. They describe the form, and the fee is £5.",
])
def test_what_the_documents_say_without_only_is_an_answer(answer):
    assert not decide_answer(answer).abstained


@pytest.mark.parametrize("answer", [
    "I couldn't find a guarantee period for the motor in these manual excerpts. They only explain how to claim "
    "(through the shop, with a receipt) and what voids the guarantee. Hovra or your dealer should be able to tell "
    "you the exact length.",
    "The terms provided don't say anything about a loyalty discount. They cover opening hours, membership grades "
    "and the junior discount, so it's best to check with the club directly.",
])
def test_a_report_lists_what_the_documents_cover(answer):
    """After a decline, a report goes on through what it lists ("They cover opening hours, membership grades and
    the junior discount"), and anyone who "should be able to tell you" refers on."""
    assert decide_answer(answer).abstained


def test_a_listed_clause_with_its_own_subject_or_number_answers():
    assert not decide_answer("The leaflet doesn't give the fee online. They describe the form, and you can pay "
                             "by card.").abstained
    assert not decide_answer("The terms don't say anything about a loyalty discount. They cover opening hours, "
                             "and juniors pay £5.").abstained


@pytest.mark.parametrize("answer", [
    "The guide doesn't state the annual fee. They cover payment methods, and the account closes after a year of "
    "inactivity.",
    "The guide doesn't state the fee. They cover payment methods, and the warranty covers parts and labour for five "
    "years.",
    "The manual does not give the saving. Eco mode should be able to help you save energy.",
])
def test_a_report_does_not_swallow_a_claim(answer):
    """After a decline, a long clause with a verb of its own, a number in words, or a product that "should be able
    to help" is a claim, not a listed item of the report nor a referral (a review's inputs)."""
    assert not decide_answer(answer).abstained
