"""Write data/sample_summaries.jsonl: six short fictional articles, each with a faithful summary and a
flawed one (invented facts, loaded tone, or off-topic text), written for evalkit's summary scorers.

Columns: id, system (faithful / flawed), question_type "summary", question, contexts [article], answer
(the summary), hallucinated (hand label), flaw (what was done to the flawed summary).
"""
from __future__ import annotations

import json
from pathlib import Path

ARTICLES = {
    "s01": (
        "The Millbrook town council approved a $4.2 million budget for 2025 on Tuesday. The budget raises spending "
        "on road repairs by 12 percent and adds two librarians at the public library. Property taxes will rise by "
        "1.5 percent, the first increase since 2019. Council member Rosa Diaz voted against the plan, arguing that "
        "the library hires should wait a year. The budget takes effect on January 1, 2025.",
        "Millbrook's council approved a $4.2 million budget for 2025 that raises road repair spending 12 percent, "
        "adds two librarians and lifts property taxes 1.5 percent, the first rise since 2019. Rosa Diaz voted against it.",
        "Millbrook's council pushed through a bloated $6 million budget that doubles road spending. The so-called "
        "reformers ignored Rosa Diaz, who obviously knew better, and taxes jump 5 percent.",
        "invented numbers, loaded wording",
    ),
    "s02": (
        "Researchers at the Harlow Institute tested a drought-tolerant wheat variety across 18 farms over three "
        "seasons. Yields were 9 percent higher than the standard variety in dry years and about equal in wet years. "
        "The variety needs 20 percent less irrigation water. Seed companies expect to sell it from 2026. "
        "The researchers caution that the trials covered only one climate zone.",
        "A Harlow Institute trial on 18 farms found a drought-tolerant wheat yielded 9 percent more in dry years, "
        "matched the standard variety in wet years and needed 20 percent less water; the trials covered one climate zone.",
        "A Harlow Institute wheat doubled yields on 80 farms in every climate and will end world hunger by 2026.",
        "invented numbers and overclaiming",
    ),
    "s03": (
        "Aster Dynamics recalled 12,000 Halo X2 thermal cameras after reports that the battery could overheat. "
        "No injuries were reported. Owners can return the camera for a free replacement battery at any service "
        "center. The recall covers units made between March and June 2024. The company said the fault came from "
        "one supplier's cells.",
        "Aster Dynamics recalled 12,000 Halo X2 cameras made from March to June 2024 because the battery could "
        "overheat; no injuries were reported and owners get a free replacement battery.",
        "Aster Dynamics recalled 12,000 Halo X2 cameras. Our cafeteria serves lunch from noon to 2 pm and parking is "
        "free on weekends for all staff members.",
        "off-topic segment",
    ),
    "s04": (
        "The city of Tessel opened a 14-kilometer bike lane along the river on Saturday. The project cost $7.5 "
        "million and took two years to build. Officials expect 3,000 riders a day by next summer. Local shop owners "
        "were divided: some welcomed more visitors, others worried about lost parking spaces.",
        "Tessel opened a 14-kilometer riverside bike lane that cost $7.5 million and took two years; officials expect "
        "3,000 daily riders, while shop owners are split over visitors and parking.",
        "Tessel finally opened its 14-kilometer bike lane, and the idiots who complained about parking can stop "
        "whining now. It cost $7.5 million.",
        "toxic wording, tone shift",
    ),
    "s05": (
        "Northfield Mutual will raise homeowners premiums in Territory 118 by 0.305 percent from March 1, 2025. "
        "The base premium rises to $606 a year. Premiums in Territory 205 fall by 0.133 percent. The insurer cited "
        "higher repair costs after last year's storms. Customers can lower premiums by choosing a higher deductible.",
        "From March 1, 2025 Northfield Mutual raises Territory 118 premiums 0.305 percent to a $606 base, cuts "
        "Territory 205 by 0.133 percent, and cites storm repair costs.",
        "Northfield Mutual raises Territory 118 premiums 3 percent to $660 and Territory 205 premiums also rise, "
        "because of new regulations.",
        "invented numbers, wrong direction, wrong cause",
    ),
    "s06": (
        "The Millbrook covered bridge, built in 1872, will close for repairs from May to September. Engineers "
        "found rot in six of the bridge's wooden beams. The repairs will cost about $380,000, shared by the county "
        "and the state. A temporary footbridge will let pedestrians cross during the work.",
        "Millbrook's 1872 covered bridge closes May to September to replace six rotten beams at about $380,000, paid "
        "by county and state; a temporary footbridge will serve pedestrians.",
        "The covered bridge will close for repairs.",
        "too short: misses most key points",
    ),
}


def records():
    for sid, (article, good, bad, flaw) in ARTICLES.items():
        for system, summary, halluc, note in (("faithful", good, False, ""), ("flawed", bad, "invented" in flaw or "over" in flaw or "wrong" in flaw, flaw)):
            yield {"id": sid, "system": system, "question_type": "summary", "question": "Summarize the article.",
                   "contexts": [article], "answer": summary, "hallucinated": bool(halluc), "flaw": note}


if __name__ == "__main__":
    out = Path(__file__).with_name("sample_summaries.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for r in records():
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {sum(1 for _ in records())} records to {out}")
