"""Atomics on 8- and 16-bit elements, which OpenCL C 1.2 has no built-ins for: a compare-and-swap loop on the
aligned 32-bit word that holds the element (the language's 32-bit `cmpxchg`), replacing only the element's
bits, so neighbouring elements updated concurrently by other work-items are never lost.

One helper per (operation, element type), returning the old value as the atomic built-ins do. fp16/bf16 values are
`float` in registers (exactly representable in their format); an fp16/bf16 add is done in float and rounded to
nearest even once, which is the correctly rounded half-precision sum (float has more than 2p+2 bits, so the double
rounding is innocuous): bit-identical to a device adding in half. The byte position in the word follows the device's
byte order (`CStyleLanguage.little_endian`, folded by the compiler). Element alignment (1 or 2 bytes) means an
element never straddles two words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from triton_backend_sdk.ir.enums import RMWOp
from triton_backend_sdk.ir.types import FloatType, IntType, Type

from . import ctypes as CT
from .language import CStyleLanguage


@dataclass(frozen=True)
class SubWord:
    #: helper-name tag, element type in memory, type in registers, bits of the element
    tag: str
    mem: str
    reg: str
    bits: int
    #: C expressions: register value from its bits (a `uint`), bits (a `uint`) from a register value
    dec: Callable[[str], str]
    enc: Callable[[str], str]
    #: helpers `dec`/`enc` call
    deps: tuple[str, ...] = ()


def subword(t: Type, lang: CStyleLanguage) -> SubWord | None:
    """How an 8/16-bit element type is taken apart, or None for other types."""
    if isinstance(t, IntType) and t.width in (8, 16):
        s, u = CT.INT_C[t.width], CT.UINT_C[t.width]
        return SubWord(f"i{t.width}", s, s, t.width, lambda b: f"(({s})({u})({b}))", lambda x: f"((uint)({u})({x}))")
    if CT.is_half(t):
        return SubWord(
            "f16",
            "ushort",
            "float",
            16,
            lambda b: f"tb_h2f((ushort)({b}))",
            lambda x: f"((uint)tb_f2h({x}))",
            ("tb_f2h", "tb_h2f"),
        )
    if CT.is_bf16(t):
        return SubWord(
            "bf16",
            "ushort",
            "float",
            16,
            lambda b: lang.bitcast("float", f"({b}) << 16"),
            lambda x: f"({lang.bitcast('uint', f'tb_rnd_bf({x})')} >> 16)",
            ("tb_rnd_bf",),
        )
    return None


def _combine(kind: RMWOp, sw: SubWord, is_float: bool, lang: CStyleLanguage) -> str | None:
    """The new element value from the old one `o` and the operand `v` (register type), or None if unsupported."""
    if is_float:
        return {RMWOp.FADD: "o + v", RMWOp.ADD: "o + v", RMWOp.XCHG: "v"}.get(kind)
    s, u = sw.reg, "u" + sw.reg
    mx, mn = lang.function("max"), lang.function("min")
    return {
        RMWOp.ADD: f"({s})(({u})o + ({u})v)",
        RMWOp.AND: "o & v",
        RMWOp.OR: "o | v",
        RMWOp.XOR: "o ^ v",
        RMWOp.XCHG: "v",
        RMWOp.MAX: f"{mx}(o, v)",
        RMWOp.MIN: f"{mn}(o, v)",
        RMWOp.UMAX: f"({s}){mx}(({u})o, ({u})v)",
        RMWOp.UMIN: f"({s}){mn}(({u})o, ({u})v)",
    }.get(kind)


def _prologue(sw: SubWord, lang: CStyleLanguage) -> str:
    mask = (1 << sw.bits) - 1
    g = lang.global_qual
    return f"""\
  volatile {g}uint *w = (volatile {g}uint *)((ulong)p & ~(ulong)3);
  uint at = (uint)((ulong)p & 3ul), sh = ({lang.little_endian()} ? at : {4 - sw.bits // 8}u - at) * 8u;
  uint m = {mask}u << sh, prev, old = *w;"""


def rmw_helper(kind: RMWOp, t: Type, lang: CStyleLanguage) -> tuple[str, str, tuple[str, ...]] | None:
    """(name, C text, helpers it needs) of the atomic `kind` on 8/16-bit type `t`, or None if unsupported."""
    sw = subword(t, lang)
    if sw is None:
        return None
    body = _combine(kind, sw, isinstance(t, FloatType), lang)
    if body is None:
        return None
    name = f"tb_atomic_{kind.name.lower()}_{sw.tag}"
    text = f"""\
{sw.reg} {name}(volatile {lang.global_qual}{sw.mem} *p, {sw.reg} v) {{
{_prologue(sw, lang)}
  do {{
    prev = old;
    {sw.reg} o = {sw.dec("(prev & m) >> sh")};
    old = {lang.atomic("cmpxchg", 32, "w", "prev", f"(prev & ~m) | ({sw.enc(body)} << sh)")};
  }} while (old != prev);
  return {sw.dec("(old & m) >> sh")};
}}"""
    return name, text, sw.deps


def cas_helper(t: Type, lang: CStyleLanguage) -> tuple[str, str, tuple[str, ...]] | None:
    """(name, C text, helpers it needs) of compare-and-swap on 8/16-bit type `t` (bitwise comparison, as the
    hardware's), or None if unsupported."""
    sw = subword(t, lang)
    if sw is None:
        return None
    name = f"tb_atomic_cas_{sw.tag}"
    text = f"""\
{sw.reg} {name}(volatile {lang.global_qual}{sw.mem} *p, {sw.reg} c, {sw.reg} v) {{
{_prologue(sw, lang)}
  uint cb = {sw.enc("c")} << sh, vb = {sw.enc("v")} << sh;
  do {{
    prev = old;
    if ((prev & m) != cb) break;
    old = {lang.atomic("cmpxchg", 32, "w", "prev", "(prev & ~m) | vb")};
  }} while (old != prev);
  return {sw.dec("(old & m) >> sh")};
}}"""
    return name, text, sw.deps
