"""Decide: from per-row scores to decisions and numbers.

``pipeline`` (``evaluate``'s front door: score, then verdict), ``verdict`` and ``profiles`` (the PASS/WARN/FAIL
rules, named), ``gate`` (``evalkit check``), ``aggregate`` (means with intervals), ``judge_variance``, ``compare``
(paired system comparison) and ``calibrate/`` (thresholds against human labels, active labelling, estimates).
"""
