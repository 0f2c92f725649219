"""The calibration family's error, on its own so that every module of the family can raise it without importing
another (core chooses a guaranteed threshold through guarantee, which raises it too)."""
from __future__ import annotations


class CalibrationError(ValueError):
    """Calibration cannot be done as asked (one class only, unreachable criterion, bad input)."""
