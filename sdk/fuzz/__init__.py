"""Differential fuzzing of the SDK's backends against Triton's interpreter (see runner.py)."""
