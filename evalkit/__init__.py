"""evalkit: evaluate the answers of LLM and RAG systems, calibrate thresholds, publish reproducibly.

The public face (re-exports only): ``load``, ``evaluate``, ``summary``, ``apply_verdicts``, the metric
registry, and the modules ``evalkit.calibrate``, ``evalkit.compare`` and ``evalkit.report``, usable after a
plain ``import evalkit``.

Examples
--------
>>> import evalkit
>>> "relevance" in evalkit.REGISTRY
True
>>> evalkit.calibrate.calibrate([0.1, 0.9, 0.2, 0.8], [0, 1, 0, 1], n_resamples=20).threshold
0.8
"""
from ._version import __version__
from .aggregate import summary
from .config import ConfigError, EvalConfig, Thresholds
from .data import DataError, load, save
from .evidence import show
from .metrics import REGISTRY, Score, get_metric, register_metric, unregister_metric
from .pipeline import aevaluate, evaluate
from .runner import MetricError
from .verdict import apply_verdicts, verdict
from . import calibrate, compare, notebook, report  # noqa: E402  (modules: evalkit.calibrate.calibrate(...))

__all__ = ["__version__", "load", "save", "evaluate", "aevaluate", "summary", "verdict", "EvalConfig", "Thresholds",
           "ConfigError", "DataError", "MetricError", "REGISTRY", "Score", "get_metric", "register_metric", "unregister_metric", "apply_verdicts",
           "calibrate", "compare", "notebook", "report", "show"]
