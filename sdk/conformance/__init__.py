"""Conformance suite: kernel cases × dtypes × shapes, runnable on any registered backend, and its runner."""

from .runner import REFERENCES, Report, run

__all__ = ["REFERENCES", "Report", "run"]
