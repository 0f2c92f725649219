"""evalkit: evaluate the answers of LLM and RAG systems, calibrate thresholds, publish reproducibly.

The public face, loaded on first use (PEP 562): ``load``, ``evaluate``, ``summary``, ``apply_verdicts``, ``show``,
the metric registry, the calibration lab (``explore``, ``label_next``, ``labeler``) and the modules
``evalkit.decide.calibrate``, ``evalkit.decide.compare``, ``evalkit.publish.notebook`` and ``evalkit.publish.report``, all usable after a plain
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

from evalkit._version import __version__

# name -> "module:attribute" ("module:" for a module itself), imported on first access
_LAZY = {
    "summary": "evalkit.decide.aggregate:summary",
    "ConfigError": "evalkit.base.config:ConfigError", "EvalConfig": "evalkit.base.config:EvalConfig",
    "VerdictThresholds": "evalkit.base.config:VerdictThresholds", "Thresholds": "evalkit.base.config:Thresholds",
    "DataError": "evalkit.base.data:DataError", "load": "evalkit.base.data:load", "save": "evalkit.base.data:save",
    "show": "evalkit.publish.view.show:show",
    "REGISTRY": "evalkit.metrics:REGISTRY", "Score": "evalkit.metrics:Score", "get_metric": "evalkit.metrics:get_metric",
    "register_metric": "evalkit.metrics:register_metric", "unregister_metric": "evalkit.metrics:unregister_metric",
    "aevaluate": "evalkit.decide.pipeline:aevaluate", "evaluate": "evalkit.decide.pipeline:evaluate",
    "MetricError": "evalkit.run.runner:MetricError",
    # evalkit.verdict is the module (its verdict() function: evalkit.verdict.verdict): a lazy name equal to a
    # submodule's would be replaced by the module the first time anything imports it
    "apply_verdicts": "evalkit.decide.verdict:apply_verdicts", "verdict": "evalkit.decide.verdict:",
    "explore": "evalkit.publish.lab:explore", "labeler": "evalkit.publish.lab:labeler",
    "label_next": "evalkit.decide.calibrate.active:label_next", "estimate": "evalkit.decide.calibrate.estimate:estimate",
    "calibrate": "evalkit.decide.calibrate:", "compare": "evalkit.decide.compare:", "notebook": "evalkit.publish.notebook:",
    "report": "evalkit.publish.report:",
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
