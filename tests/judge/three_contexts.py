"""A fixed RAG table with three contexts a row (the sample's rows; each row's own context first, then the
contexts of the next two questions), for counting judge calls per row."""
from __future__ import annotations

from pathlib import Path

import evalkit

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample_rag.jsonl"


def three_context_rows():
    """The sample's 84 rows (42 questions, 2 systems), three contexts each; each row's own context is first."""
    df = evalkit.load(SAMPLE)
    own = {q: list(c) for q, c in zip(df["id"], df["contexts"])}
    ids = list(dict.fromkeys(df["id"]))
    nxt = {q: (ids[(i + 1) % len(ids)], ids[(i + 2) % len(ids)]) for i, q in enumerate(ids)}
    df["contexts"] = [own[q][:1] + own[nxt[q][0]][:1] + own[nxt[q][1]][:1] for q in df["id"]]
    return df
