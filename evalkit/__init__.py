"""evalkit: evaluate the answers of LLM and RAG systems, calibrate thresholds, publish reproducibly.

The public face (re-exports only): ``load``, ``evaluate``, ``summary``, and the metric registry.

Examples
--------
>>> import evalkit
>>> "relevance" in evalkit.REGISTRY
True
"""
from ._version import __version__
from .aggregate import summary
from .config import EvalConfig, Thresholds
from .data import DataError, load, save
from .metrics import REGISTRY, Score, get_metric
from .runner import evaluate
from .verdict import verdict

__all__ = ["__version__", "load", "save", "evaluate", "summary", "verdict", "EvalConfig", "Thresholds",
           "DataError", "REGISTRY", "Score", "get_metric"]
