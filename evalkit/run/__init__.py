"""Score: one execution path from rows to per-row scores.

``runner`` (the planner and executor ``evaluate``, ``evalkit score`` and the dry run share), ``resources`` (the
shared resources a run loads and signs), ``stream`` (the same in checkpointed chunks) and ``engine`` (where the
chunks run: this process or a Dask cluster).
"""
