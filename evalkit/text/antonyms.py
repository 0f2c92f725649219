"""Antonyms: a small offline list plus the negating prefixes ("likely"/"unlikely", "agree"/"disagree").

Used by the grounding detector to score a word an answer put in place of its evidence's word. The list is
short on purpose (the opposites LLM edits use most: SummEdits' antonym swaps, FactCC's); a pair not in it is
still a substitution, just not an antonym.

Examples
--------
>>> are_antonyms("increase", "decreased"), are_antonyms("likely", "unlikely"), are_antonyms("boys", "girls")
(True, True, True)
>>> are_antonyms("rose", "climbed")
False
"""
from __future__ import annotations

from functools import lru_cache

_PAIRS = """
increase decrease; increase reduce; increase cut; rise fall; rise drop; rise decline; raise lower; grow shrink;
gain lose; gain loss; win lose; won lost; winner loser; victory defeat; profit loss; up down; high low; higher lower;
highest lowest; more less; more fewer; most least; many few; big small; large small; larger smaller; largest smallest;
long short; longer shorter; early late; earlier later; before after; first last; begin end; start finish; start end;
open close; opened closed; accept reject; approve reject; approve deny; allow forbid; allow ban; allow prohibit;
agree refuse; include exclude; add remove; buy sell; bought sold; borrow lend; import export; give take; give receive;
send receive; push pull; enter exit; arrive leave; arrive depart; come go; join leave; hire fire; hire dismiss;
positive negative; good bad; better worse; best worst; success failure; succeed fail; strong weak; stronger weaker;
rich poor; wealthy poor; cheap expensive; fast slow; faster slower; quick slow; hot cold; warm cool; wet dry;
light dark; light heavy; easy difficult; easy hard; simple complex; safe dangerous; happy sad; love hate; like dislike;
friend enemy; ally enemy; true false; right wrong; correct incorrect; guilty innocent; legal illegal; public private;
male female; man woman; men women; boy girl; boys girls; husband wife; father mother; son daughter; brother sister;
king queen; he she; his her; him her; old young; older younger; old new; new used; ancient modern; past future;
always never; everyone nobody; all none; every no; yes no; present absent; alive dead; live die; born died;
birth death; war peace; attack defend; offense defense; guilty acquitted; convicted acquitted; north south;
east west; left right; top bottom; above below; inside outside; internal external; domestic foreign;
minimum maximum; min max; majority minority; senior junior; full empty; wide narrow; deep shallow; thick thin;
tall short; loud quiet; noisy quiet; busy idle; active passive; increase drop; surplus deficit; asset liability;
credit debit; income expense; revenue cost; expand contract; inflate deflate; appreciate depreciate; bull bear;
optimistic pessimistic; optimism pessimism; confident doubtful; certain uncertain; sure unsure; support oppose;
supporter opponent; for against; pro con; praise criticize; praise criticise; reward punish; save spend;
save waste; keep lose; find lose; remember forget; include omit; confirm deny; admit deny; true untrue; wins losses;
gains losses; ascend descend; upgrade downgrade; upward downward; strengthen weaken; tighten loosen; before since;
day night; morning evening; summer winter; spring autumn; weekday weekend; days weeks; weeks months; months years;
hours minutes; daily weekly; weekly monthly; monthly yearly; care neglect; protect harm; help hurt; help harm;
benefit harm; healthy sick; healthy ill; sick well; clean dirty; fresh stale; raw cooked; hard soft; rural urban;
city country; temporary permanent; partial complete; partial full; major minor; primary secondary; superior inferior;
same different; similar different; same other; together apart; married divorced; married single; employed unemployed;
inbound outbound; incoming outgoing; input output; buyer seller; seller buyer; customer vendor; teacher student;
parent child; adult child; employer employee; landlord tenant; host guest; question answer; ask answer; ask tell;
rose fell; rose dropped; risen fallen; grew shrank; won lost; sold bought; gave took; went came; began ended;
lent borrowed; sent received; more lesser; increased decreased; increase decline;
"""
_NEGATING_PREFIXES = ("un", "in", "im", "ir", "il", "dis", "non", "non-", "mis", "anti")


def _stem(word: str) -> str:
    """A crude English stem, enough to match "increased" / "increases" / "increasing" with "increase"."""
    w = word.lower()
    for suffix in ("ing", "ed", "es", "s", "er", "est", "ly"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            w = w[: -len(suffix)]
            break
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


@lru_cache(maxsize=1)
def antonym_stems() -> frozenset[tuple[str, str]]:
    """The list's pairs as stems, both orders."""
    pairs = set()
    for item in _PAIRS.replace("\n", " ").split(";"):
        words = item.split()
        if len(words) == 2:
            a, b = _stem(words[0]), _stem(words[1])
            pairs |= {(a, b), (b, a)}
    return frozenset(pairs)


def are_antonyms(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` (single words, any case or inflection) are opposites by the list or a prefix."""
    a, b = a.lower(), b.lower()
    if a == b:
        return False
    if (_stem(a), _stem(b)) in antonym_stems() or (a, b) in antonym_stems():
        return True
    for x, y in ((a, b), (b, a)):
        for p in _NEGATING_PREFIXES:
            if x.startswith(p) and len(y) > 3 and x[len(p):] == y:
                return True
    return False
