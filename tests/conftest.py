import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_rag.jsonl"
BENCH = ROOT.parent / "shared" / "bench"


@pytest.fixture(scope="session")
def sample_path() -> Path:
    return SAMPLE


@pytest.fixture(scope="session")
def sample_df():
    import evalkit

    return evalkit.load(SAMPLE)


@pytest.fixture(scope="session")
def sample_results(sample_df):
    import evalkit

    return evalkit.evaluate(sample_df, config=ROOT / "experiments" / "default.config.yaml", progress=False)


@pytest.fixture(scope="session")
def nlp():
    from evalkit.nlp import NlpPipeline

    return NlpPipeline()
