"""Load: what every later step shares, validated once at the door.

``config`` (the run's settings, validated when read), ``thresholds``, ``data`` (reading and checking the input
rows), ``sources`` (inputs larger than memory, chunk by chunk), ``safeio`` (writers that never destroy),
``signature`` (what produced a result), ``nlp`` and ``encoders`` (the spaCy pipeline and sentence encoders, loaded
lazily). Nothing here imports from a later step.
"""
