"""Shared analyses over the SDK IR (facts both backends read instead of computing their own)."""
