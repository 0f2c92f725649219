"""Write data/sample_rag.jsonl: evalkit's bundled sample (written for evalkit; all facts are fictional).

Two systems (``rag-a``, ``rag-b``) answer the same 42 questions over four fictional
sources. Labels were assigned by hand while writing each answer:
``hallucinated`` (the answer states something the contexts do not support),
``correct`` (the answer gives the expected answer), and ``human_score`` (1-5 overall quality).
Run ``python data/build_sample.py`` to regenerate; the output is deterministic.
"""
from __future__ import annotations

import json
from pathlib import Path

RATE_MANUAL = (
    "Northfield Mutual Homeowners Rate Manual, Section 4 (effective March 1, 2023). "
    "Territory 118 covers the lakeshore ZIP codes 60614 and 60657. The base premium for Territory 118 is $604 per year, "
    "an increase of 0.305% over the 2022 manual. Territory 205 covers the western suburbs; its base premium is $512, "
    "a change of -0.133% from 2022. Territory 311 (rural) has a base premium of $438."
)
RULES = (
    "Section 5, Rating Rules. Rule C-1 applies a protection-class factor of 1.12 to dwellings more than 5 miles from a "
    "fire station. Rule C-2 grants a 7% discount for monitored alarm systems. Rule C-3 adds a $75 surcharge for wood "
    "stoves. Rule C-4 caps the total discount at 25%. Rule C-5 requires an inspection for homes built before 1950."
)
DEDUCTIBLES = (
    "Section 6, Deductibles. The standard deductible is $1,000. Choosing a $2,500 deductible lowers the premium by 12 percent; "
    "a $500 deductible raises it by 9 percent. Wind and hail claims in Territory 118 carry a separate 2% deductible."
)
ANNUAL = (
    "Aster Dynamics Annual Report 2023. Revenue reached $1.2 billion in fiscal 2023, up 8.4% from $1.107 billion in 2022. "
    "Operating margin fell to 11.2% from 13.5%. The company employs 4,870 people across 14 countries. "
    "Dr. Lena Ortiz became chief executive on June 12, 2023, succeeding Paul Brandt. "
    "Aster Dynamics acquired Corvel Sensors in November 2023 for $86 million. "
    "Net income was $97 million, a decline of 3.1%."
)
PRODUCTS = (
    "Aster Dynamics products. The Halo X2 thermal camera sells for $1,499 and weighs 410 grams. "
    "The Halo X3, released in April 2024, sells for $1,899. The Beacon gateway supports up to 64 sensors."
)
TOWN = (
    "Millbrook is a town on the Tessel River. It was founded in 1847 by Quaker settlers. "
    "The 2020 census counted 12,406 residents. Millbrook's covered bridge, built in 1872, is the oldest in the county. "
    "The town hosts the Tessel Apple Festival every October."
)
LAB = (
    "The Harlow Institute study enrolled 240 adults. Participants who walked 30 minutes a day lowered systolic blood "
    "pressure by 6 mmHg on average after 12 weeks. The control group changed by -1 mmHg. "
    "The authors note the study was not blinded and call for a larger trial."
)


def q(id, qtype, question, contexts, gt, a, b):
    return {"id": id, "question_type": qtype, "question": question, "contexts": contexts, "ground_truth": gt,
            "answers": {"rag-a": a, "rag-b": b}}


# each answer: (text, hallucinated, correct, human_score 1-5)
QUESTIONS = [
    q("q01", "fact", "What ZIP codes does Territory 118 cover?", [RATE_MANUAL],
      "Territory 118 covers ZIP codes 60614 and 60657.",
      ("Territory 118 covers the lakeshore ZIP codes 60614 and 60657.", False, True, 5),
      ("Territory 118 covers ZIP codes 60614, 60657 and 60610.", True, False, 2)),
    q("q02", "numeric", "What is the base premium for Territory 118?", [RATE_MANUAL],
      "The base premium for Territory 118 is $604 per year.",
      ("The base premium for Territory 118 is $604 per year.", False, True, 5),
      ("The base premium for Territory 118 is $640 per year.", True, False, 1)),
    q("q03", "numeric", "By how much did the Territory 118 base premium change from 2022?", [RATE_MANUAL],
      "It increased by 0.305% over the 2022 manual.",
      ("It rose 0.305% compared with the 2022 manual, to $604.", False, True, 5),
      ("The premium increased by 3.05% from 2022.", True, False, 1)),
    q("q04", "numeric", "What was the percentage change for Territory 205 since 2022?", [RATE_MANUAL],
      "Territory 205 changed by -0.133% from 2022.",
      ("Territory 205's base premium changed by -0.133% from 2022, to $512.", False, True, 5),
      ("Territory 205 increased by 0.133% from 2022.", True, False, 2)),
    q("q05", "numeric", "What is the difference between the Territory 118 and Territory 311 base premiums?", [RATE_MANUAL],
      "The difference is $166 ($604 minus $438).",
      ("Territory 118 is $604 and Territory 311 is $438, so the difference is $166.", False, True, 5),
      ("I cannot calculate the difference from the information provided.", False, False, 2)),
    q("q06", "list", "List the rating rules in Section 5.", [RULES],
      "Rule C-1 (protection-class factor 1.12), Rule C-2 (7% alarm discount), Rule C-3 ($75 wood stove surcharge), "
      "Rule C-4 (25% discount cap), Rule C-5 (inspection for homes built before 1950).",
      ("Section 5 lists:\n- Rule C-1: protection-class factor of 1.12 beyond 5 miles from a fire station\n"
       "- Rule C-2: 7% discount for monitored alarms\n- Rule C-3: $75 surcharge for wood stoves\n"
       "- Rule C-4: total discount capped at 25%\n- Rule C-5: inspection for homes built before 1950", False, True, 5),
      ("The rules are:\n- Rule C-1: protection-class factor\n- Rule C-2: 10% alarm discount\n- Rule C-3: wood stove surcharge",
       True, False, 2)),
    q("q07", "fact", "What discount does Rule C-2 grant?", [RULES],
      "Rule C-2 grants a 7% discount for monitored alarm systems.",
      ("Rule C-2 grants a 7 percent discount for monitored alarm systems.", False, True, 5),
      ("Rule C-2 grants a 7% discount for monitored alarm systems, according to Section 5 (page 12 of the PDF).",
       False, True, 4)),
    q("q08", "numeric", "What surcharge applies to homes with wood stoves?", [RULES],
      "Rule C-3 adds a $75 surcharge for wood stoves.",
      ("A $75.00 surcharge applies under Rule C-3.", False, True, 5),
      ("A $150 surcharge applies to wood stoves under Rule C-3.", True, False, 1)),
    q("q09", "fact", "Which homes require an inspection?", [RULES],
      "Homes built before 1950 require an inspection (Rule C-5).",
      ("Under Rule C-5, homes built before 1950 require an inspection.", False, True, 5),
      ("Homes built before 1905 require an inspection.", True, False, 1)),
    q("q10", "numeric", "What is the maximum total discount?", [RULES],
      "Rule C-4 caps the total discount at 25%.",
      ("The total discount is capped at 25% (Rule C-4).", False, True, 5),
      ("I don't know.", False, False, 1)),
    q("q11", "numeric", "How does a $2,500 deductible affect the premium?", [DEDUCTIBLES],
      "A $2,500 deductible lowers the premium by 12 percent.",
      ("Choosing a $2,500 deductible lowers the premium by 12%.", False, True, 5),
      ("A $2,500 deductible lowers the premium by 21%.", True, False, 1)),
    q("q12", "fact", "What is the standard deductible?", [DEDUCTIBLES],
      "The standard deductible is $1,000.",
      ("The standard deductible is $1,000.", False, True, 5),
      ("The standard deductible is 1000 dollars.", False, True, 5)),
    q("q13", "numeric", "What deductible applies to wind and hail claims in Territory 118?", [DEDUCTIBLES, RATE_MANUAL],
      "Wind and hail claims in Territory 118 carry a separate 2% deductible.",
      ("A separate 2% deductible applies to wind and hail claims in Territory 118.", False, True, 5),
      ("Wind and hail claims use the standard $1,000 deductible.", True, False, 2)),
    q("q14", "numeric", "What would a Territory 118 home pay with a $500 deductible?", [RATE_MANUAL, DEDUCTIBLES],
      "A $500 deductible raises the $604 base premium by 9 percent, to about $658.36.",
      ("The $500 deductible raises the $604 base premium by 9%, giving $658.36.", False, True, 5),
      ("With a $500 deductible the premium would be $604.", False, False, 2)),
    q("q15", "numeric", "What was Aster Dynamics' revenue in fiscal 2023?", [ANNUAL],
      "Revenue was $1.2 billion in fiscal 2023.",
      ("Aster Dynamics reported revenue of $1.2 billion in fiscal 2023, up 8.4%.", False, True, 5),
      ("Revenue was $1.5 billion in fiscal 2023.", True, False, 1)),
    q("q16", "numeric", "How did the operating margin change?", [ANNUAL],
      "Operating margin fell to 11.2% from 13.5%, a drop of 2.3 percentage points.",
      ("Operating margin fell from 13.5% to 11.2%, a decline of 2.3 points.", False, True, 5),
      ("Operating margin improved to 13.5%.", True, False, 1)),
    q("q17", "fact", "Who became chief executive of Aster Dynamics in 2023?", [ANNUAL],
      "Dr. Lena Ortiz became chief executive on June 12, 2023.",
      ("Dr. Lena Ortiz became chief executive on 12 June 2023, succeeding Paul Brandt.", False, True, 5),
      ("Paul Brandt became chief executive in January 2023.", True, False, 1)),
    q("q18", "fact", "Which company did Aster Dynamics acquire, and when?", [ANNUAL],
      "Aster Dynamics acquired Corvel Sensors in November 2023.",
      ("It acquired Corvel Sensors in November 2023 for $86 million.", False, True, 5),
      ("Aster Dynamics acquired Corvel Sensors in 2023-11.", False, True, 4)),
    q("q19", "numeric", "How many people does Aster Dynamics employ?", [ANNUAL],
      "Aster Dynamics employs 4,870 people.",
      ("The company employs 4,870 people across 14 countries.", False, True, 5),
      ("The company employs about 5,200 people in 18 countries.", True, False, 1)),
    q("q20", "numeric", "What was the change in net income?", [ANNUAL],
      "Net income was $97 million, a decline of 3.1%.",
      ("Net income declined 3.1% to $97 million.", False, True, 5),
      ("Net income grew 3.1% to $97 million.", True, False, 2)),
    q("q21", "summary", "Summarize Aster Dynamics' 2023 results.", [ANNUAL],
      "Revenue rose 8.4% to $1.2 billion, operating margin fell to 11.2%, net income declined 3.1% to $97 million, "
      "Lena Ortiz became CEO and the company acquired Corvel Sensors.",
      ("In 2023 revenue grew 8.4% to $1.2 billion while operating margin fell to 11.2% and net income declined 3.1% to "
       "$97 million. Dr. Lena Ortiz became chief executive and the company acquired Corvel Sensors for $86 million.",
       False, True, 5),
      ("Aster Dynamics had a record year: revenue doubled to $2.4 billion, margins expanded and the company opened "
       "offices in 30 countries.", True, False, 1)),
    q("q22", "numeric", "How much does the Halo X3 cost compared with the Halo X2?", [PRODUCTS],
      "The Halo X3 costs $1,899, which is $400 more than the $1,499 Halo X2.",
      ("The Halo X3 sells for $1,899, $400 more than the Halo X2 at $1,499.", False, True, 5),
      ("The Halo X3 costs $1,999, $500 more than the Halo X2.", True, False, 1)),
    q("q23", "fact", "When was the Halo X3 released?", [PRODUCTS],
      "The Halo X3 was released in April 2024.",
      ("The Halo X3 was released in April 2024.", False, True, 5),
      ("It was released on April 2, 2024.", True, False, 3)),
    q("q24", "numeric", "How many sensors does the Beacon gateway support?", [PRODUCTS],
      "The Beacon gateway supports up to 64 sensors.",
      ("Up to 64 sensors.", False, True, 5),
      ("N/A", False, False, 1)),
    q("q25", "fact", "How much does the Halo X2 weigh?", [PRODUCTS],
      "The Halo X2 weighs 410 grams.",
      ("The Halo X2 weighs 410 grams.", False, True, 5),
      ("The Halo X2 weighs 0.41 kilograms, according to the product sheet.", False, True, 4)),
    q("q26", "fact", "When was Millbrook founded and by whom?", [TOWN],
      "Millbrook was founded in 1847 by Quaker settlers.",
      ("Millbrook was founded in 1847 by Quaker settlers.", False, True, 5),
      ("Millbrook was founded in 1874 by Dutch traders.", True, False, 1)),
    q("q27", "numeric", "What was Millbrook's population in the 2020 census?", [TOWN],
      "The 2020 census counted 12,406 residents.",
      ("The 2020 census counted 12,406 residents.", False, True, 5),
      ("About 12 thousand people live there.", False, False, 3)),
    q("q28", "fact", "What is notable about Millbrook's covered bridge?", [TOWN],
      "Built in 1872, it is the oldest covered bridge in the county.",
      ("The covered bridge, built in 1872, is the oldest in the county.", False, True, 5),
      ("The covered bridge was built in 1872 and is the longest in the state.", True, False, 2)),
    q("q29", "fact", "When is the Tessel Apple Festival held?", [TOWN],
      "The Tessel Apple Festival is held every October.",
      ("Every October.", False, True, 4),
      ("The festival is held every September on the river bank.", True, False, 1)),
    q("q30", "summary", "Summarize what the sources say about Millbrook.", [TOWN],
      "Millbrook is a town on the Tessel River founded in 1847 by Quakers, with 12,406 residents in 2020, the county's "
      "oldest covered bridge (1872) and an apple festival every October.",
      ("Millbrook, on the Tessel River, was founded by Quaker settlers in 1847. It had 12,406 residents in 2020, has the "
       "county's oldest covered bridge from 1872 and hosts the Tessel Apple Festival each October.", False, True, 5),
      ("Millbrook is a small town with a long history and an annual festival.", False, False, 3)),
    q("q31", "numeric", "How much did systolic blood pressure drop in the walking group?", [LAB],
      "It dropped by 6 mmHg on average after 12 weeks.",
      ("Walkers lowered systolic blood pressure by 6 mmHg on average after 12 weeks.", False, True, 5),
      ("Walkers lowered systolic blood pressure by 16 mmHg after 6 weeks.", True, False, 1)),
    q("q32", "numeric", "What was the change in the control group?", [LAB],
      "The control group changed by -1 mmHg.",
      ("The control group changed by -1 mmHg.", False, True, 5),
      ("The control group improved by 1 mmHg as well.", True, False, 2)),
    q("q33", "fact", "How many adults did the Harlow Institute study enroll?", [LAB],
      "The study enrolled 240 adults.",
      ("It enrolled 240 adults.", False, True, 5),
      ("The study enrolled 2,400 adults across five hospitals.", True, False, 1)),
    q("q34", "fact", "What limitations do the authors mention?", [LAB],
      "The study was not blinded and the authors call for a larger trial.",
      ("The authors note that the study was not blinded and call for a larger trial.", False, True, 5),
      ("I'm not sure; the context does not say.", False, False, 1)),
    q("q35", "summary", "Summarize the Harlow Institute study.", [LAB],
      "A 240-adult study found that walking 30 minutes a day lowered systolic blood pressure by 6 mmHg after 12 weeks "
      "versus -1 mmHg in controls; it was not blinded.",
      ("The Harlow Institute enrolled 240 adults; daily 30-minute walks lowered systolic pressure by 6 mmHg after "
       "12 weeks, against -1 mmHg in the control group. The study was not blinded.", False, True, 5),
      ("Walking may possibly help blood pressure, and the researchers suggest it could be useful.", False, False, 2)),
    q("q36", "fact", "What protection-class factor does Rule C-1 apply?", [RULES],
      "Rule C-1 applies a protection-class factor of 1.12.",
      ("Rule C-1 applies a factor of 1.12 to dwellings more than 5 miles from a fire station.", False, True, 5),
      ("Our cafeteria serves lunch from noon to 2 pm and the parking garage is free on weekends.", True, False, 1)),
    q("q37", "fact", "What is the base premium in Territory 311?", [RATE_MANUAL],
      "Territory 311 has a base premium of $438.",
      ("The rural Territory 311 has a base premium of $438.", False, True, 5),
      ("<script>alert('owned')</script> The base premium is $438.", False, True, 2)),
    q("q38", "numeric", "By what percent did revenue grow from 2022 to 2023?", [ANNUAL],
      "Revenue grew 8.4%, from $1.107 billion to $1.2 billion.",
      ("Revenue grew 8.4 percent, from $1.107 billion in 2022 to $1.2 billion.", False, True, 5),
      ("Revenue grew 8.4%, from $1.107 billion to $1.2 billion, based on the annual report document.", False, True, 5)),
    q("q39", "fact", "Who did Lena Ortiz succeed?", [ANNUAL],
      "She succeeded Paul Brandt.",
      ("Dr. Lena Ortiz succeeded Paul Brandt as chief executive.", False, True, 5),
      ("She succeeded Mark Feld, the founder.", True, False, 1)),
    q("q40", "list", "Which ZIP codes and territories are named in Section 4?", [RATE_MANUAL],
      "Territory 118 (ZIP codes 60614 and 60657), Territory 205 and Territory 311.",
      ("- Territory 118: ZIP codes 60614 and 60657\n- Territory 205: western suburbs\n- Territory 311: rural", False, True, 5),
      ("- Territory 118\n- Territory 205", False, False, 3)),
    q("q41", "numeric", "What did Aster Dynamics pay for Corvel Sensors?", [ANNUAL],
      "Aster Dynamics paid $86 million for Corvel Sensors.",
      ("It paid $86 million.", False, True, 5),
      ("The acquisition cost $68 million.", True, False, 1)),
    q("q42", "fact", "What river is Millbrook on?", [TOWN],
      "Millbrook is on the Tessel River.",
      ("Millbrook is on the Tessel River.", False, True, 5),
      ("There is no information about a river in the sources.", False, False, 1)),
]


def records():
    for item in QUESTIONS:
        for system, (answer, halluc, correct, hscore) in item["answers"].items():
            yield {"id": item["id"], "system": system, "question_type": item["question_type"],
                   "question": item["question"], "contexts": item["contexts"], "answer": answer,
                   "ground_truth": item["ground_truth"], "hallucinated": halluc, "correct": correct,
                   "human_score": hscore}


if __name__ == "__main__":
    out = Path(__file__).with_name("sample_rag.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for r in records():
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {sum(1 for _ in records())} records to {out}")
