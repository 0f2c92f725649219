"""Checks every registered metric as a whole: range, determinism, empty-input policy, declared properties,
and every module's docstring examples."""
import doctest
import importlib
import inspect
import pkgutil

import pytest

import evalkit
from evalkit.metrics import DEFAULT_METRICS, REGISTRY, Score

ROW = {"question": "What is the base premium for Territory 118?",
       "answer": "The base premium for Territory 118 is $604 per year, according to the manual.",
       "contexts": ["The base premium for Territory 118 is $604 per year."],
       "ground_truth": "The base premium for Territory 118 is $604 per year.",
       "id": "q02", "question_type": "numeric"}
EMPTY = {"question": "", "answer": "", "contexts": [], "ground_truth": "", "id": "x", "question_type": None}
NONE = {"question": None, "answer": None, "contexts": None, "ground_truth": None, "id": None, "question_type": None}


NUMBERS = {"faithfulness": 80.0, "context_precision": None, "context_recall": 50.0, "answer_relevance": 70.0}


@pytest.fixture(scope="module")
def kit(scripted_judge, encoder, judge_server):
    from evalkit.encoders import get_bert_scorer
    from evalkit.judge import JudgeConfig

    return {"judge": scripted_judge, "encoder": encoder, "scorer": get_bert_scorer(),
            "judge_config": JudgeConfig(base_url=judge_server.url, model="scripted", cache_path=None)}


def call(m, row, kit):
    source = {**row, **NUMBERS} if m.derived else row
    kwargs = {k: source[k] for k in m.needs + m.optional}
    params = inspect.signature(m.fn).parameters
    kwargs.update({k: v for k, v in kit.items() if k in params})
    return m.fn(**kwargs)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_declared_properties(name):
    m = REGISTRY[name]
    assert m.name == name and m.direction in ("higher", "lower", "none") and m.kind in ("score", "bool", "label")
    assert m.range is None or m.range[0] < m.range[1]
    assert m.empty_policy and m.description
    params = inspect.signature(m.fn).parameters
    assert all(n in params for n in m.needs + m.optional), "fn must accept every declared input"
    assert (m.fn.__doc__ or "").strip(), "metrics document themselves"


@pytest.mark.parametrize("name", list(REGISTRY))
@pytest.mark.parametrize("row", [ROW, EMPTY, NONE], ids=["row", "empty", "none"])
def test_range_type_and_determinism(name, row, kit):
    m = REGISTRY[name]
    if "raises" in m.empty_policy and row is not ROW:
        with pytest.raises(ValueError):
            call(m, row, kit)
        return
    a, b = call(m, row, kit), call(m, row, kit)
    assert isinstance(a, Score) and a == b
    if a.value is None:
        assert a.details.get("reason"), "an undetermined value must say why"
        return
    if m.kind == "bool":
        assert isinstance(a.value, bool)
    elif m.kind == "label":
        assert isinstance(a.value, str)
    else:
        assert m.range[0] <= a.value <= m.range[1] and a.value == a.value


@pytest.mark.parametrize("name", [n for n in REGISTRY if REGISTRY[n].batch is not None])
def test_batch_equals_row_function(name, sample_df, kit):
    from evalkit.config import EvalConfig
    from evalkit.runner import Resources, _metric_params

    m = REGISTRY[name]
    rows = sample_df.head(12)
    inputs = {c: rows[c].tolist() for c in m.needs + m.optional if c in rows.columns}
    params = _metric_params(m, EvalConfig(), None)
    jc = kit["judge_config"]
    res = Resources(EvalConfig(judge={"base_url": jc.base_url, "model": jc.model, "cache_path": None}))
    res._judge, res._encoder, res._bert = kit["judge"], kit["encoder"], kit["scorer"]
    batch = m.batch(inputs, params, res)
    fn_params = inspect.signature(m.fn).parameters
    for i in range(len(rows)):
        row = {k: v[i] for k, v in inputs.items()}
        extra = {k: v for k, v in kit.items() if k in fn_params}
        if "encoder" in fn_params and m.name == "answer_relevance":
            extra["encoder"] = kit["encoder"]
        single = m.fn(**row, **{k: v for k, v in params.items() if k in fn_params}, **extra)
        assert single.value == pytest.approx(batch[i].value) if single.value is not None else batch[i].value is None


def test_defaults_are_registered():
    assert set(DEFAULT_METRICS) <= set(REGISTRY)


def test_names_say_direction():
    for m in REGISTRY.values():
        if m.name.endswith(("_error", "_rate")):
            assert m.direction == "lower"


MODULES = sorted(mod.name for mod in pkgutil.walk_packages(evalkit.__path__, "evalkit."))


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    mod = importlib.import_module(module)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
