"""The SDK's float narrowing (`triton_backend_sdk.numerics`) spelled as OpenCL C: the bodies of the bf16 rounding
helpers come from the one shared algorithm instead of a C copy of it."""

from __future__ import annotations

from triton_backend_sdk.numerics import f32_to_bf16_bits


class _COps:
    """uint C expressions."""

    def const(self, v: int) -> str:
        return f"{v:#x}u"

    def and_(self, a: str, b: str) -> str:
        return f"({a} & {b})"

    def or_(self, a: str, b: str) -> str:
        return f"({a} | {b})"

    def add(self, a: str, b: str) -> str:
        return f"({a} + {b})"

    def shr(self, a: str, k: int) -> str:
        return f"({a} >> {k})"

    def ugt(self, a: str, b: str) -> str:
        return f"({a} > {b})"

    def select(self, c: str, a: str, b: str) -> str:
        return f"({c} ? {a} : {b})"


def bf16_round_helper(name: str, rtz: bool) -> str:
    """`float name(float f)`: `f` rounded to bf16 (nearest even, or toward zero), still held in a float."""
    bits = f32_to_bf16_bits(_COps(), "x", rtz)
    return f"float {name}(float f) {{\n  uint x = as_uint(f);\n  return as_float({bits} << 16);\n}}"
