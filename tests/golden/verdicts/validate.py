"""Structural check of the hand-labelled verdict corpus (does not run any checker).

Usage: python3 validate.py   (from any directory)
"""
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = ["short", "sentence", "paraphrase", "list_count", "units", "number_words", "dates",
         "range", "misattribution", "negation", "added_clause", "fabricated_number",
         "fabricated_name", "wrong_date", "off_topic", "incomplete", "refusal", "empty",
         "non_english"]
VERDICTS = ["PASS", "WARN", "FAIL", "ABSTAIN", "UNDETERMINED"]
REQUIRED = ["id", "domain", "question_id", "kind", "user_input", "retrieved_contexts",
            "response", "expected", "why"]
SHORT_KINDS = {"short", "units", "number_words", "dates", "range", "list_count"}


def load(name):
    rows = []
    with open(HERE / name, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit(f"{name}:{n}: bad JSON: {e}")
    return rows


def table(title, counter, keys=None):
    keys = keys or sorted(counter)
    print(f"  {title}: " + ", ".join(f"{k}={counter[k]}" for k in keys if counter[k]))


def main():
    errors = []
    files = {"dev.jsonl": load("dev.jsonl"), "heldout.jsonl": load("heldout.jsonl")}
    ids, qids = Counter(), {}
    for name, rows in files.items():
        qids[name] = set()
        for r in rows:
            for k in REQUIRED:
                if k not in r:
                    errors.append(f"{name} {r.get('id')}: missing {k}")
            ids[r.get("id")] += 1
            qids[name].add(r["question_id"])
            if r.get("kind") not in KINDS:
                errors.append(f"{name} {r['id']}: bad kind {r.get('kind')}")
            if r.get("expected") not in VERDICTS:
                errors.append(f"{name} {r['id']}: bad expected {r.get('expected')}")
            ctx = r.get("retrieved_contexts")
            if not (isinstance(ctx, list) and 1 <= len(ctx) <= 4 and all(isinstance(c, str) and c for c in ctx)):
                errors.append(f"{name} {r['id']}: contexts must be 1-4 non-empty strings")
            if not r["id"].startswith(r["question_id"] + "-"):
                errors.append(f"{name} {r['id']}: id does not start with question_id")
    for i, c in ids.items():
        if c > 1:
            errors.append(f"duplicate id {i}")
    both = qids["dev.jsonl"] & qids["heldout.jsonl"]
    if both:
        errors.append(f"question_id on both sides: {sorted(both)}")
    # rows of one question must share question text, contexts and reference
    for name, rows in files.items():
        seen = {}
        for r in rows:
            key = (r["user_input"], tuple(r["retrieved_contexts"]), r.get("reference"))
            if seen.setdefault(r["question_id"], key) != key:
                errors.append(f"{name} {r['id']}: differs from other rows of {r['question_id']}")

    allrows = [r for rows in files.values() for r in rows]
    for name, rows in list(files.items()) + [("ALL", allrows)]:
        nq = len({r["question_id"] for r in rows})
        nref = len({r["question_id"] for r in rows if "reference" in r})
        print(f"== {name}: {len(rows)} rows, {nq} questions ({nref} with reference)")
        table("domain", Counter(r["domain"] for r in rows))
        table("expected", Counter(r["expected"] for r in rows), VERDICTS)
        table("kind", Counter(r["kind"] for r in rows), KINDS)
    short_pass = sum(1 for r in allrows if r["kind"] in SHORT_KINDS and r["expected"] == "PASS")
    print(f"short-form correct answers (PASS with kind in {sorted(SHORT_KINDS)}): {short_pass}")
    kc = Counter(r["kind"] for r in allrows)
    minimum = {"empty": 4, "non_english": 16}
    thin = [k for k in KINDS if kc[k] < minimum.get(k, 8)]
    if thin:
        errors.append(f"kinds below their minimum (8; empty 4; non_english 16): {thin}")
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
