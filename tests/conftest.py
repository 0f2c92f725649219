import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_rag.jsonl"
BENCH = ROOT.parent / "shared" / "bench"


def pytest_configure(config):
    # deselected by default through pyproject's addopts (-m "not slow"); run them with: pytest -m slow
    config.addinivalue_line("markers", "slow: minutes of work (e.g. retraining the grounding model); pytest -m slow")
    config.addinivalue_line("markers", "server: needs a real inference server (llama-cpp-python, `pip install -e .[server]`); pytest -m server")


# what the suite's runs leave in the checkout (a notebook opened alone caches its scores and figures beside its
# experiment; JupyterLab writes checkpoints beside a notebook it opens; building the wheel leaves setuptools'
# build/ and egg-info)
LEFT_BY_RUNS = ("experiments/.evalkit_cache", "experiments/figures", "figures/*/", "notebooks/.ipynb_checkpoints",
                "evalkit/notebooks/.ipynb_checkpoints", "reports", "paper", "build", "evalkit.egg-info")


def _left_by_runs() -> set[Path]:
    return {p for pattern in LEFT_BY_RUNS for p in ROOT.glob(pattern.rstrip("/")) if p.is_dir()}


def _is_xdist_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionstart(session):
    """`make test` leaves the checkout as it found it: folders the suite's runs create there are removed at the
    end (those that were there before, e.g. a user's own reports/, are kept). Under pytest-xdist only the controller
    does this, after every worker has finished (a worker that finishes first must not remove a folder another
    worker's notebook is still writing)."""
    if not _is_xdist_worker(session.config):
        session.config._evalkit_left_before = _left_by_runs()


def pytest_sessionfinish(session):
    import shutil

    before = getattr(session.config, "_evalkit_left_before", None)
    if before is None:
        return
    for path in sorted(_left_by_runs() - before, key=lambda p: len(p.parts), reverse=True):
        shutil.rmtree(path, ignore_errors=True)


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

    import dataclasses

    cfg = evalkit.EvalConfig.from_yaml(ROOT / "experiments" / "default.config.yaml")
    cfg = dataclasses.replace(cfg, fact_checks=str(ROOT / "data" / "fact_checks.yaml"))  # the sample's own rules
    return evalkit.evaluate(sample_df, config=cfg, progress=False)


@pytest.fixture(scope="session")
def nlp():
    from evalkit.base.nlp import NlpPipeline

    return NlpPipeline()


@pytest.fixture(scope="session")
def judge_server():
    from evalkit.testing import ScriptedJudgeServer

    with ScriptedJudgeServer(stall_seconds=2.0) as srv:
        yield srv


@pytest.fixture(scope="session")
def scripted_judge(judge_server):
    """A real OpenAI-compatible client talking HTTP to the scripted judge server (in-memory cache)."""
    from evalkit.judge import JudgeConfig, OpenAIJudge

    j = OpenAIJudge(JudgeConfig(base_url=judge_server.url, model="scripted", cache_path=None, backoff=0.01))
    yield j
    j.close()


@pytest.fixture(scope="session")
def encoder():
    from evalkit.base.encoders import get_encoder

    return get_encoder()
