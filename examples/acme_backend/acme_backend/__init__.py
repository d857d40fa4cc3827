"""ACME: an example vendor backend for stock Triton on triton-backend-sdk (see the README's tutorial)."""

__version__ = "0.1.0"
