"""Conformance suite: kernel cases × dtypes × shapes, runnable on any registered backend, and its runner."""
