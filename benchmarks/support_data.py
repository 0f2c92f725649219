"""Training pairs for the support model: (premise = a context window, hypothesis = a sentence, supported 0/1).

Three sources, all from ``../shared`` (read at run time, never copied into the project):

* ``nli``: ``nli/nli_pairs.jsonl.gz`` (FEVER-NLI, MultiNLI, SNLI, BEGIN, FaithDial, WiCE), a fixed quota per source.
* ``halueval``: HaluEval summarization **train** split. Each sentence of the correct summary with its best window
  of the document (most of its content words) is supported; the same sentence with one fact changed
  (see ``perturb``) against the same window, and the sentence against the document's least-overlapping window,
  are not. (Hallucinated summaries are not used sentence by sentence: most of their sentences are correct.)
* ``synthetic``: sentences of the train documents with their window (supported) vs the same sentence with a
  number, date, name, unit, comparative or polarity changed, a value moved from another sentence of the same
  document, or a sentence of another document (not supported).

The dev files (``halueval_*_dev.jsonl``, ``summedits_dev.jsonl``) are never read here: they are the held-out
evaluation. Deterministic for a seed; prints the mix and label balance per source.

    .venv/bin/python benchmarks/support_data.py --out /tmp/support_pairs.jsonl.gz
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalkit.metrics.support import context_windows  # noqa: E402
from evalkit.text.tokens import sentences  # noqa: E402

SHARED = ROOT.parent / "shared"
NLI = SHARED / "nli" / "nli_pairs.jsonl.gz"
HALU_TRAIN = SHARED / "bench" / "halueval_summarization_train.jsonl.gz"

NLI_QUOTA = {"fever-nli": 2200, "mnli": 1600, "snli": 900, "begin": 1500, "faithdial": 520, "wice": 707}
HALU_DOCS = 1200  # train documents whose correct summary gives pairs
SYN_DOCS = 1300  # other train documents used for synthetic pairs
SYN_PER_DOC = 3  # sentences per synthetic document

_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = frozenset("the a an of to in on and or for with by at from is was are were be been it its that this as "
                  "he she they his her their has have had not but which who will would said says".split())
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])")
_YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)\b")
_MONTHS = "January February March April May June July August September October November December".split()
_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_NAME = re.compile(r"(?<=[a-z,;] )([A-Z][a-z]+(?: [A-Z][a-z]+)*)")
_UNITS = [("million", "billion"), ("thousand", "million"), ("percent", "points"), ("miles", "kilometres"),
          ("km", "miles"), ("pounds", "kilograms"), ("hours", "days"), ("days", "weeks"), ("weeks", "months"),
          ("months", "years"), ("minutes", "hours"), ("feet", "metres"), ("%", " points"), ("$", "£")]
_COMPARATIVES = [("more", "less"), ("higher", "lower"), ("larger", "smaller"), ("increased", "decreased"),
                 ("rose", "fell"), ("before", "after"), ("first", "last"), ("most", "least"), ("won", "lost"),
                 ("best", "worst"), ("older", "younger"), ("longer", "shorter"), ("above", "below"),
                 ("earlier", "later"), ("up", "down"), ("bigger", "smaller"), ("gained", "lost"),
                 ("increase", "decrease"), ("rise", "fall"), ("many", "few"), ("majority", "minority")]
_AUX = re.compile(r"\b(is|was|are|were|has|have|had|will|can|could|would|should|did|does|do)( not)?\b")


def content(text: str) -> set[str]:
    return {w for w in (t.lower() for t in _WORD.findall(text)) if w not in _STOP and len(w) > 1}


def _sub_once(text: str, old: str, new: str, rng: random.Random, word: bool = True) -> str | None:
    pat = re.compile((r"\b" + re.escape(old) + r"\b") if word and old[:1].isalnum() else re.escape(old))
    hits = list(pat.finditer(text))
    if not hits:
        return None
    m = rng.choice(hits)
    return text[:m.start()] + new + text[m.end():]


def perturb(sentence: str, doc_sentences: list[str], rng: random.Random) -> tuple[str, str] | None:
    """The sentence with one fact changed, and the kind of change; None when no change applies.

    Kinds: ``moved`` (a number or name taken from another sentence of the same document: a value attached to the
    wrong item), ``number``, ``date``, ``name``, ``unit``, ``comparative``, ``polarity``.
    """
    others = [s for s in doc_sentences if s != sentence]
    kinds = ["moved", "number", "date", "name", "unit", "comparative", "polarity"]
    rng.shuffle(kinds)
    for kind in kinds:
        out = _perturb_kind(kind, sentence, others, rng)
        if out and out != sentence:
            return out, kind
    return None


def _perturb_kind(kind: str, s: str, others: list[str], rng: random.Random) -> str | None:
    if kind == "moved":
        nums = _NUMBER.findall(s)
        other_nums = sorted({n for o in others for n in _NUMBER.findall(o)} - set(nums))
        if nums and other_nums:
            return _sub_once(s, rng.choice(nums), rng.choice(other_nums), rng)
        names = [n for n in _NAME.findall(s)]
        other_names = sorted({n for o in others for n in _NAME.findall(o)} - set(names))
        if names and other_names:
            return _sub_once(s, rng.choice(names), rng.choice(other_names), rng)
        return None
    if kind == "number":
        nums = [n for n in _NUMBER.findall(s) if not _YEAR.fullmatch(n)]
        if not nums:
            return None
        old = rng.choice(nums)
        try:
            v = float(old.replace(",", ""))
        except ValueError:
            return None
        new_v = v + rng.choice([1, 2, 3, 5, 10]) if v < 20 else v * rng.choice([0.5, 0.7, 1.3, 1.5, 2.0])
        new = f"{new_v:.1f}" if "." in old else (f"{int(round(new_v)):,}" if "," in old else str(int(round(new_v))))
        return _sub_once(s, old, new, rng) if new != old else None
    if kind == "date":
        years = _YEAR.findall(s)
        if years:
            old = rng.choice(years)
            return _sub_once(s, old, str(int(old) + rng.choice([-3, -2, -1, 1, 2])), rng)
        for names in (_MONTHS, _DAYS):
            found = [m for m in names if re.search(r"\b" + m + r"\b", s)]
            if found:
                old = rng.choice(found)
                return _sub_once(s, old, rng.choice([m for m in names if m != old]), rng)
        return None
    if kind == "name":
        names = _NAME.findall(s)
        pool = sorted({n for o in others for n in _NAME.findall(o)} - set(names))
        if names and pool:
            return _sub_once(s, rng.choice(names), rng.choice(pool), rng)
        return None
    if kind == "unit":
        opts = [(a, b) for a, b in _UNITS if (a in s if not a[:1].isalnum() else re.search(r"\b" + a + r"\b", s))]
        if not opts:
            return None
        a, b = rng.choice(opts)
        return _sub_once(s, a, b, rng, word=a[:1].isalnum())
    if kind == "comparative":
        opts = [(a, b) for a, b in _COMPARATIVES + [(b, a) for a, b in _COMPARATIVES] if re.search(r"\b" + a + r"\b", s)]
        if not opts:
            return None
        a, b = rng.choice(opts)
        return _sub_once(s, a, b, rng)
    if kind == "polarity":
        hits = list(_AUX.finditer(s))
        if not hits:
            return None
        m = rng.choice(hits)
        new = m.group(1) if m.group(2) else m.group(1) + " not"
        return s[:m.start()] + new + s[m.end():]
    return None


def _read_jsonl(path: Path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def nli_pairs(rng: random.Random, quota: dict[str, int] = NLI_QUOTA) -> list[dict]:
    by_source: dict[str, list[dict]] = {}
    for r in _read_jsonl(NLI):
        by_source.setdefault(r["source"], []).append(r)
    out = []
    for src in sorted(by_source):
        rows = sorted(by_source[src], key=lambda r: r["id"])
        rng.shuffle(rows)
        for r in rows[:quota.get(src, 0)]:
            out.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": int(r["supported"]),
                        "source": f"nli/{src}", "group": r["id"]})
    return out


def _best_worst(sentence: str, windows) -> tuple[int, int]:
    words = content(sentence)
    scores = [len(words & content(w.text)) / max(len(words), 1) for w in windows]
    best = max(range(len(windows)), key=lambda i: (scores[i], -i))
    worst = min(range(len(windows)), key=lambda i: (scores[i], i))
    return best, worst


def halueval_and_synthetic(rng: random.Random, halu_docs: int = HALU_DOCS, syn_docs: int = SYN_DOCS,
                           syn_per_doc: int = SYN_PER_DOC) -> tuple[list[dict], list[dict]]:
    items = {}
    for r in _read_jsonl(HALU_TRAIN):
        if not r["hallucinated"]:
            items[r["item_id"]] = r
    ids = sorted(items)
    rng.shuffle(ids)
    halu, syn = [], []
    docs_text = []
    for item_id in ids[:halu_docs]:
        r = items[item_id]
        doc = " ".join(r["contexts"])
        windows = context_windows([doc], max_tokens=120)  # words: ~160 word pieces, within max_length
        doc_sents = sentences(doc)
        if len(windows) < 2:
            continue
        for s in sentences(r["answer"]):
            if len(s.split()) < 4:
                continue
            best, worst = _best_worst(s, windows)
            halu.append({"premise": windows[best].text, "hypothesis": s, "label": 1, "source": "halueval/summary",
                         "group": item_id})
            changed = perturb(s, doc_sents, rng)
            if changed:
                halu.append({"premise": windows[best].text, "hypothesis": changed[0], "label": 0,
                             "source": f"halueval/perturbed-{changed[1]}", "group": item_id})
            if worst != best and rng.random() < 0.35:
                halu.append({"premise": windows[worst].text, "hypothesis": s, "label": 0,
                             "source": "halueval/other-window", "group": item_id})
    for item_id in ids[halu_docs:halu_docs + syn_docs]:
        docs_text.append((item_id, " ".join(items[item_id]["contexts"])))
    for k, (item_id, doc) in enumerate(docs_text):
        windows = context_windows([doc], max_tokens=120)  # words: ~160 word pieces, within max_length
        doc_sents = sentences(doc)
        cand = [(wi, s) for wi, w in enumerate(windows) for s in sentences(w.text) if 6 <= len(s.split()) <= 60]
        if not cand:
            continue
        for wi, s in rng.sample(cand, min(syn_per_doc, len(cand))):
            changed = perturb(s, doc_sents, rng)
            if not changed:
                continue  # keep the pair balanced: a supported copy only where a negative exists
            syn.append({"premise": windows[wi].text, "hypothesis": s, "label": 1, "source": "synthetic/copy",
                        "group": item_id})
            syn.append({"premise": windows[wi].text, "hypothesis": changed[0], "label": 0,
                        "source": f"synthetic/{changed[1]}", "group": item_id})
        if rng.random() < 0.5:  # a sentence of another document: unsupported, and easy
            other = sentences(docs_text[(k + 1 + rng.randrange(len(docs_text) - 1)) % len(docs_text)][1])
            if other:
                syn.append({"premise": rng.choice(windows).text, "hypothesis": rng.choice(other), "label": 0,
                            "source": "synthetic/other-document", "group": item_id})
    return halu, syn


def build(seed: int = 13) -> list[dict]:
    """All training pairs, shuffled with ``seed``."""
    rng = random.Random(seed)
    pairs = nli_pairs(rng)
    halu, syn = halueval_and_synthetic(rng)
    pairs += halu + syn
    rng.shuffle(pairs)
    return pairs


def data_hash(pairs: list[dict]) -> str:
    h = hashlib.sha256()
    for p in pairs:
        h.update(json.dumps([p["premise"], p["hypothesis"], p["label"]], ensure_ascii=False).encode())
    return h.hexdigest()[:16]


def mix_table(pairs: list[dict]) -> str:
    """The mix: pairs and the supported share per source (and per family of sources)."""
    n, pos = Counter(p["source"] for p in pairs), Counter(p["source"] for p in pairs if p["label"] == 1)
    fam_n = Counter(p["source"].split("/")[0] for p in pairs)
    fam_pos = Counter(p["source"].split("/")[0] for p in pairs if p["label"] == 1)
    lines = ["| source | pairs | supported |", "|---|---:|---:|"]
    for fam in sorted(fam_n):
        lines.append(f"| **{fam}** | **{fam_n[fam]:,}** | **{fam_pos[fam] / fam_n[fam]:.1%}** |")
        for s in sorted(k for k in n if k.split("/")[0] == fam):
            lines.append(f"| {s} | {n[s]:,} | {pos[s] / n[s]:.1%} |")
    total_pos = sum(pos.values())
    lines.append(f"| **all** | **{len(pairs):,}** | **{total_pos / len(pairs):.1%}** |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", type=Path, default=Path("/tmp/support_pairs.jsonl.gz"))
    args = ap.parse_args(argv)
    pairs = build(args.seed)
    with gzip.open(args.out, "wt", encoding="utf-8") as f:
        for p in pairs:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    print(mix_table(pairs))
    print(f"data hash {data_hash(pairs)}; {len(pairs):,} pairs -> {args.out}")


if __name__ == "__main__":
    main()
