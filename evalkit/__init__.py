"""evalkit: evaluate the answers of LLM and RAG systems, calibrate thresholds, publish reproducibly.

The public face, loaded on first use (PEP 562): ``load``, ``evaluate``, ``summary``, ``apply_verdicts``, ``show``,
the metric registry, the calibration lab (``explore``, ``label_next``, ``labeler``) and the modules
``evalkit.calibrate``, ``evalkit.compare``, ``evalkit.notebook`` and ``evalkit.report``, all usable after a plain
``import evalkit``, which itself loads nothing but this file and the version (``evalkit --help`` stays fast, and a
script that only reads results never imports scikit-learn, PyTorch or matplotlib).

Examples
--------
>>> import evalkit
>>> "relevance" in evalkit.REGISTRY
True
>>> evalkit.calibrate.calibrate([0.1, 0.9, 0.2, 0.8], [0, 1, 0, 1], n_resamples=20).threshold
0.8
"""
from __future__ import annotations

import importlib
from typing import Any

from ._version import __version__

# name -> "module:attribute" ("module:" for a module itself), imported on first access
_LAZY = {
    "summary": "evalkit.aggregate:summary",
    "ConfigError": "evalkit.config:ConfigError", "EvalConfig": "evalkit.config:EvalConfig",
    "VerdictThresholds": "evalkit.config:VerdictThresholds", "Thresholds": "evalkit.config:Thresholds",
    "DataError": "evalkit.data:DataError", "load": "evalkit.data:load", "save": "evalkit.data:save",
    "show": "evalkit.view.show:show",
    "REGISTRY": "evalkit.metrics:REGISTRY", "Score": "evalkit.metrics:Score", "get_metric": "evalkit.metrics:get_metric",
    "register_metric": "evalkit.metrics:register_metric", "unregister_metric": "evalkit.metrics:unregister_metric",
    "aevaluate": "evalkit.pipeline:aevaluate", "evaluate": "evalkit.pipeline:evaluate",
    "MetricError": "evalkit.runner:MetricError",
    # evalkit.verdict is the module (its verdict() function: evalkit.verdict.verdict): a lazy name equal to a
    # submodule's would be replaced by the module the first time anything imports it
    "apply_verdicts": "evalkit.verdict:apply_verdicts", "verdict": "evalkit.verdict:",
    "explore": "evalkit.lab:explore", "labeler": "evalkit.lab:labeler",
    "label_next": "evalkit.calibrate.active:label_next", "estimate": "evalkit.calibrate.estimate:estimate",
    "calibrate": "evalkit.calibrate:", "compare": "evalkit.compare:", "notebook": "evalkit.notebook:",
    "report": "evalkit.report:",
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'evalkit' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = importlib.import_module(module)
    if attr:
        value = getattr(value, attr)
    globals()[name] = value  # once imported, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = ["__version__", *_LAZY]
