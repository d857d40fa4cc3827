"""The SDK's float conversions (`triton_backend_sdk.numerics`, `numerics_fp8`) spelled in C and the language's bit
casts: the bodies of the bf16 rounding and the fp8 encoding/decoding helpers come from the one shared algorithm
instead of a C copy of it."""

from __future__ import annotations

from collections.abc import Callable

from triton_backend_sdk.numerics import f32_to_bf16_bits
from triton_backend_sdk.numerics_fp8 import Fp8Format, f32_to_fp8_bits, fp8_bits_of_widened, fp8_to_f32_bits

from .language import CStyleLanguage


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

    def sub(self, a: str, b: str) -> str:
        return f"({a} - {b})"

    def shr(self, a: str, k: int) -> str:
        return f"({a} >> {k})"

    def shl(self, a: str, k: int) -> str:
        return f"({a} << {k})"

    def shrv(self, a: str, k: str) -> str:
        return f"({a} >> {k})"

    def ugt(self, a: str, b: str) -> str:
        return f"({a} > {b})"

    def eq(self, a: str, b: str) -> str:
        return f"({a} == {b})"

    def select(self, c: str, a: str, b: str) -> str:
        return f"({c} ? {a} : {b})"


def bf16_round_helper(name: str, lang: CStyleLanguage, rtz: bool) -> str:
    """`float name(float f)`: `f` rounded to bf16 (nearest even, or toward zero), still held in a float."""
    bits = f32_to_bf16_bits(_COps(), "x", rtz)
    x, y = lang.bitcast("uint", "f"), lang.bitcast("float", f"{bits} << 16")
    return f"float {name}(float f) {{\n  uint x = {x};\n  return {y};\n}}"


class _CStatements(_COps):
    """uint C statements: each operation binds a temporary, since an expression tree would repeat every operand
    used twice (the fp8 roundings use most of them several times)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def _bind(self, ctype: str, expr: str) -> str:
        name = f"t{len(self.lines)}"
        self.lines.append(f"  {ctype} {name} = {expr};")
        return name

    def and_(self, a: str, b: str) -> str:
        return self._bind("uint", super().and_(a, b))

    def or_(self, a: str, b: str) -> str:
        return self._bind("uint", super().or_(a, b))

    def add(self, a: str, b: str) -> str:
        return self._bind("uint", super().add(a, b))

    def sub(self, a: str, b: str) -> str:
        return self._bind("uint", super().sub(a, b))

    def shr(self, a: str, k: int) -> str:
        return self._bind("uint", super().shr(a, k))

    def shl(self, a: str, k: int) -> str:
        return self._bind("uint", super().shl(a, k))

    def shrv(self, a: str, k: str) -> str:
        return self._bind("uint", super().shrv(a, k))

    def ugt(self, a: str, b: str) -> str:
        return self._bind("bool", super().ugt(a, b))

    def eq(self, a: str, b: str) -> str:
        return self._bind("bool", super().eq(a, b))

    def select(self, c: str, a: str, b: str) -> str:
        return self._bind("uint", super().select(c, a, b))


def fp8_encode_helper(name: str, fmt: Fp8Format, lang: CStyleLanguage, rtz: bool) -> str:
    """`uchar name(float f)`: the fp8 code of `f` (nearest even, or toward zero), the SDK's rounding."""
    return _narrow_helper(name, lang, lambda o: f32_to_fp8_bits(o, "x", fmt, rtz))


def fp8_code_helper(name: str, fmt: Fp8Format, lang: CStyleLanguage) -> str:
    """`uchar name(float f)`: the code of the register value `f` (`fp8_bits_of_widened`), for stores and bitcasts:
    the code it was loaded as, infinities and NaNs included."""
    return _narrow_helper(name, lang, lambda o: fp8_bits_of_widened(o, "x", fmt))


def _narrow_helper(name: str, lang: CStyleLanguage, code_of: Callable[[_CStatements], str]) -> str:
    o = _CStatements()
    code = code_of(o)
    body = "\n".join(o.lines)
    return f"uchar {name}(float f) {{\n  uint x = {lang.bitcast('uint', 'f')};\n{body}\n  return (uchar){code};\n}}"


def fp8_decode_helper(name: str, fmt: Fp8Format, lang: CStyleLanguage) -> str:
    """`float name(uchar b)`: the exact value of the fp8 code `b`, the SDK's widening."""
    o = _CStatements()
    bits = fp8_to_f32_bits(o, "c", fmt)
    body = "\n".join(o.lines)
    return f"float {name}(uchar b) {{\n  uint c = (uint)b;\n{body}\n  return {lang.bitcast('float', bits)};\n}}"
