"""Publish: what a reader sees.

``experiment`` (the experiment file), ``analysis``, ``plots``, ``tables``, ``lessons`` ("What this means" from
numbers), ``notebook`` (the notebooks' helpers and cache), ``report`` (``evalkit report``), ``paper``
(``evalkit paper``), ``explain``, ``lab`` (the calibration lab's widgets), ``view/`` (one row's evidence),
``inline_css`` and ``jupyter_hooks``.
"""
