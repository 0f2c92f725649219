"""Helpers shared by the benchmark scripts: where the bench data is and how its rows group."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import evalkit

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT.parent / "shared" / "bench"
TASKS = {
    "halueval_qa": "halueval_qa_dev.jsonl",
    "halueval_dialogue": "halueval_dialogue_dev.jsonl",
    "halueval_summarization": "halueval_summarization_dev.jsonl",
    "summedits": "summedits_dev.jsonl",
}


def load_task(task: str, limit: int | None = None) -> pd.DataFrame:
    """One development split as a canonical DataFrame with a ``group`` column for clustered resampling:
    HaluEval's ``item_id`` (both answers of an item together), SummEdits' document (``contexts``)."""
    path = BENCH / TASKS[task]
    if not path.exists():
        raise SystemExit(f"{path} not found: the benchmarks read ../shared/bench beside the project")
    df = evalkit.load(path)
    if limit:
        df = df.head(limit).reset_index(drop=True)
    df["group"] = df["item_id"] if "item_id" in df.columns and df["item_id"].notna().all() else \
        df["contexts"].map(lambda c: "\n".join(c))
    return df


def positive_direction(metric_name: str) -> str:
    """Which way a metric's score points at ``hallucinated=True``: the registry's direction, turned."""
    d = evalkit.get_metric(metric_name).direction
    return "lower" if d == "higher" else "higher"


TRAIN_FILE = "halueval_summarization_train.jsonl.gz"


def load_train_items(n_items: int, seed: int = 0) -> pd.DataFrame:
    """``n_items`` HaluEval summarization training items (both records of each), drawn with a seeded
    permutation of the sorted item ids, in that order; ``group`` is the item id."""
    path = BENCH / TRAIN_FILE
    if not path.exists():
        raise SystemExit(f"{path} not found: the benchmarks read ../shared/bench beside the project")
    df = pd.read_json(path, lines=True)
    ids = sorted(df["item_id"].unique())
    chosen = [ids[i] for i in np.random.default_rng(seed).permutation(len(ids))[:n_items]]
    rank = {k: i for i, k in enumerate(chosen)}
    df = df[df["item_id"].isin(rank)].copy()
    df["_rank"] = df["item_id"].map(rank)
    df = df.sort_values(["_rank", "hallucinated"], kind="stable").drop(columns="_rank").reset_index(drop=True)
    df["group"] = df["item_id"]
    return df
