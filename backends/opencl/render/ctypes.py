"""SDK IR types → C types, literals, and the helper functions a program may need.

Values are held in registers in a *compute* type: f16 and bf16 in `float`, kept exactly representable in their own
format (every op that produces one rounds to nearest even), so results match a device with native half arithmetic
without needing `cl_khr_fp16` (NVIDIA's OpenCL does not list it). In memory they stay 16-bit: f16 through the
language's half loads/stores (OpenCL's `vload_half`/`vstore_half_rte`), NaNs by their bits (the hardware widening
quiets a signaling NaN; loads, stores and bitcasts move bits unchanged), bf16 by shifting the bits. i1 is `bool` in
registers and a byte in memory. The helpers are C99 plus the language's bit casts, conversions and atomics.
"""

from __future__ import annotations

import math
import struct

from triton_backend_sdk.ir.types import FloatKind, FloatType, IndexType, IntType, PointerType, Type
from triton_backend_sdk.numerics_fp8 import FP8_FORMATS, Fp8Format

from .language import CStyleLanguage
from .numerics import bf16_round_helper, fp8_code_helper, fp8_decode_helper, fp8_encode_helper

INT_C = {1: "bool", 8: "char", 16: "short", 32: "int", 64: "long"}
UINT_C = {1: "bool", 8: "uchar", 16: "ushort", 32: "uint", 64: "ulong"}
FLOAT_C = {
    FloatKind.F16: "float",
    FloatKind.BF16: "float",
    FloatKind.F32: "float",
    FloatKind.F64: "double",
    FloatKind.F8E4M3FN: "float",
    FloatKind.F8E5M2: "float",
    FloatKind.F8E4M3FNUZ: "float",
    FloatKind.F8E5M2FNUZ: "float",
}
#: the name of each element type in memory (pointee C type)
MEM_FLOAT_C = {
    FloatKind.F16: "ushort",
    FloatKind.BF16: "ushort",
    FloatKind.F32: "float",
    FloatKind.F64: "double",
    FloatKind.F8E4M3FN: "uchar",
    FloatKind.F8E5M2: "uchar",
    FloatKind.F8E4M3FNUZ: "uchar",
    FloatKind.F8E5M2FNUZ: "uchar",
}
#: the fp8 formats this backend holds (the fnuz ones, AMD's fp8e4b8/fp8e5b16, included); their conversions are the
#: SDK's (`triton_backend_sdk.numerics_fp8`)
FP8 = {k: FP8_FORMATS[k] for k in (FloatKind.F8E4M3FN, FloatKind.F8E5M2, FloatKind.F8E4M3FNUZ, FloatKind.F8E5M2FNUZ)}
#: dtypes as Triton names them, for error messages
DTYPE_NAMES = {
    FloatKind.F16: "fp16",
    FloatKind.BF16: "bf16",
    FloatKind.F32: "fp32",
    FloatKind.F64: "fp64",
    FloatKind.F8E4M3FN: "fp8e4nv",
    FloatKind.F8E5M2: "fp8e5",
    FloatKind.F8E4M3FNUZ: "fp8e4b8",
    FloatKind.F8E5M2FNUZ: "fp8e5b16",
}


class TypeError_(Exception):
    """A type this renderer cannot represent (fp8, tf32, pointers to pointers...)."""


def int_width(t: Type) -> int:
    e = t.element
    if isinstance(e, IndexType):
        return 64
    assert isinstance(e, IntType), f"{e} is not an integer type"
    return e.width


def ctype(t: Type, global_qual: str | None = None) -> str:
    """The C type a value of element type `t` is computed in (a pointer's needs the language's `global_qual`)."""
    e = t.element
    if isinstance(e, IntType):
        if e.width not in INT_C:
            raise TypeError_(f"i{e.width}")
        return INT_C[e.width]
    if isinstance(e, IndexType):
        return "long"
    if isinstance(e, FloatType):
        if e.kind not in FLOAT_C:
            raise TypeError_(str(e))
        return FLOAT_C[e.kind]
    if isinstance(e, PointerType):
        assert global_qual is not None, "a pointer's C type needs the language's global qualifier"
        return f"{global_qual}{mem_ctype(e.pointee)} *"
    raise TypeError_(str(e))


def uctype(t: Type) -> str:
    """The unsigned C type of an integer element type (wrapping arithmetic, unsigned comparisons)."""
    return UINT_C[int_width(t)]


def promoted(t: Type) -> bool:
    """Whether C computes operators on `t`'s C type in `int` (integer promotion of char/short): `a ^ b`, `~a`,
    `c ? a : b` on two shorts are ints, so such an expression is cast back before an overloaded built-in
    (`min(short, int)` is ambiguous, `clz(int)` counts 16 more zeros) or an unsigned product (int overflow)."""
    e = t.element
    return isinstance(e, IntType) and 1 < e.width < 32


def wrap_uctype(t: Type) -> str:
    """The unsigned C type wrapping arithmetic on `t` is done in: `uint` for char/short, whose unsigned types
    promote to (signed) `int`, where 0xffff * 0xffff overflows (undefined)."""
    return "uint" if promoted(t) else uctype(t)


def mem_ctype(t: Type) -> str:
    """The C type of one element of type `t` in global memory."""
    if isinstance(t, IntType):
        if t.width == 1:
            return "char"
        if t.width not in INT_C:
            raise TypeError_(f"i{t.width}")
        return INT_C[t.width]
    if isinstance(t, FloatType):
        if t.kind not in MEM_FLOAT_C:
            raise TypeError_(str(t))
        return MEM_FLOAT_C[t.kind]
    raise TypeError_(f"pointer to {t}")


def is_half(t: Type) -> bool:
    e = t.element
    return isinstance(e, FloatType) and e.kind == FloatKind.F16


def is_bf16(t: Type) -> bool:
    e = t.element
    return isinstance(e, FloatType) and e.kind == FloatKind.BF16


def fp8_of(t: Type) -> Fp8Format | None:
    e = t.element
    if not isinstance(e, FloatType):
        return None
    return FP8.get(e.kind)


def fp8_helpers(fmt: Fp8Format, lang: CStyleLanguage) -> dict[str, str]:
    """Encoders (float -> byte: nearest even, toward zero), decoder (byte -> float) and, in an IEEE-like format
    (e5m2), the decoder's inverse (a register value's byte, for stores and bitcasts: infinities and NaNs kept) of one
    fp8 format, as C text: `tb_<name>_enc`, `tb_<name>_enc_rtz`, `tb_<name>_dec`, `tb_<name>_code`."""
    tag = f"tb_{fmt.name}"
    out = {
        f"{tag}_enc": fp8_encode_helper(f"{tag}_enc", fmt, lang, rtz=False),
        f"{tag}_enc_rtz": fp8_encode_helper(f"{tag}_enc_rtz", fmt, lang, rtz=True),
        f"{tag}_dec": fp8_decode_helper(f"{tag}_dec", fmt, lang),
    }
    if fmt.ieee:
        out[f"{tag}_code"] = fp8_code_helper(f"{tag}_code", fmt, lang)
    return out


def is_f64(t: Type) -> bool:
    e = t.element
    return isinstance(e, FloatType) and e.kind == FloatKind.F64


def size_of(c: str) -> int:
    """Bytes of a compute type in local memory."""
    return {
        "bool": 1,
        "char": 1,
        "uchar": 1,
        "short": 2,
        "ushort": 2,
        "int": 4,
        "uint": 4,
        "float": 4,
        "long": 8,
        "ulong": 8,
        "double": 8,
    }.get(c, 8)


def int_literal(value: int, width: int) -> str:
    """A C literal for a signless integer bit pattern, read as signed."""
    if width == 1:
        return "true" if value & 1 else "false"
    mask = (1 << width) - 1
    v = value & mask
    if v >> (width - 1):
        v -= 1 << width
    if width == 64:
        if v == -(1 << 63):
            return "(-9223372036854775807L - 1L)"
        return f"{v}L"
    if width == 32:
        return "(-2147483647 - 1)" if v == -(1 << 31) else str(v)
    return f"(({INT_C[width]}){v})"


def float_literal(value: float, kind: FloatKind) -> str:
    if kind == FloatKind.F64:
        if math.isnan(value):
            return "(double)NAN"
        if math.isinf(value):
            return "(double)INFINITY" if value > 0 else "(-(double)INFINITY)"
        return repr(float(value)) if "e" in repr(value) or "." in repr(value) else f"{value}.0"
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    f32 = struct.unpack("<f", struct.pack("<f", value))[0]
    text = repr(f32)
    if "." not in text and "e" not in text:
        text += ".0"
    return f"{text}f"


def literal(value: float, t: Type) -> str:
    e = t.element
    if isinstance(e, FloatType):
        return float_literal(float(value), e.kind)
    return int_literal(int(value), int_width(e))


# ---- helper functions, emitted into a program only when used ---------------------------------------------------------
# Plain (not `inline`) definitions: C99 `inline` without `static` gives no external definition, which some OpenCL
# compilers then fail to link; the compilers inline these small functions anyway.


def helpers(lang: CStyleLanguage) -> dict[str, str]:
    """The helpers' C text, spelled in `lang` (C99 plus the language's bit casts, conversions and atomics)."""
    b, g = lang.bitcast, lang.global_qual
    cas32, cas64 = (lambda *a: lang.atomic("cmpxchg", 32, *a)), (lambda *a: lang.atomic("cmpxchg", 64, *a))
    return {
        "tb_f2h": f"""\
ushort tb_f2h(float f) {{
  uint x = {b("uint", "f")}, sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return (ushort)(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (ax >= 0x477ff000u) return (ushort)(sign | 0x7c00u);
  if (ax < 0x38800000u) return (ushort)(sign | (uint)rint({b("float", "ax")} * 16777216.0f));
  return (ushort)(sign | ((ax + 0xc8000fffu + ((ax >> 13) & 1u)) >> 13));
}}""",
        "tb_f2h_rtz": f"""\
ushort tb_f2h_rtz(float f) {{
  uint x = {b("uint", "f")}, sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (ushort)(sign | 0x7e00u);
  if (ax == 0x7f800000u) return (ushort)(sign | 0x7c00u);
  if (ax >= 0x47800000u) return (ushort)(sign | 0x7bffu);
  if (ax < 0x38800000u) return (ushort)(sign | (uint)({b("float", "ax")} * 16777216.0f));
  return (ushort)(sign | ((ax - 0x38000000u) >> 13));
}}""",
        "tb_h2f": f"""\
float tb_h2f(ushort h) {{
  uint sign = ((uint)h & 0x8000u) << 16, e = ((uint)h >> 10) & 0x1fu, m = (uint)h & 0x3ffu;
  if (e == 0u) return {b("float", "sign | " + b("uint", "(float)m * 5.9604644775390625e-8f"))};
  if (e == 31u) return {b("float", "sign | 0x7f800000u | (m << 13)")};
  return {b("float", "sign | ((e + 112u) << 23) | (m << 13)")};
}}""",
        "tb_rnd_h": "float tb_rnd_h(float x) { return tb_h2f(tb_f2h(x)); }",
        # an f16 load: the language's widening (one instruction where the device has it), except for a NaN, whose
        # bits tb_h2f keeps (the widening sets a signaling NaN's quiet bit, and a later store or bitcast showed it)
        "tb_h2f_load": """\
float tb_h2f_load(float widened, ushort h) {
  return ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0u) ? tb_h2f(h) : widened;
}""",
        # the bits of an f16 value held in a float: tb_h2f's exact inverse, NaN payloads included (a bitcast moves
        # them)
        "tb_h2bits": f"""\
ushort tb_h2bits(float f) {{
  uint x = {b("uint", "f")}, ax = x & 0x7fffffffu;
  if (ax <= 0x7f800000u || (ax & 0x7fe000u) == 0u) return tb_f2h(f);
  return (ushort)(((x >> 16) & 0x8000u) | 0x7c00u | ((ax >> 13) & 0x3ffu));
}}""",
        # fp64 -> f16/bf16/fp8 through float without double rounding: float rounded to odd keeps a sticky bit for
        # the final round to nearest even (float has more than their bits + 2)
        "tb_d2f_odd": f"""\
float tb_d2f_odd(double d) {{
  float f = {lang.convert("float", "d", "rtz")};
  return ((double)f != d && !isnan(d)) ? {b("float", b("uint", "f") + " | 1u")} : f;
}}""",
        "tb_rnd_h_rtz": "float tb_rnd_h_rtz(float x) { return tb_h2f(tb_f2h_rtz(x)); }",
        # bf16 rounding: the SDK's one algorithm (triton_backend_sdk.numerics), spelled in C
        "tb_rnd_bf": bf16_round_helper("tb_rnd_bf", lang, rtz=False),
        "tb_rnd_bf_rtz": bf16_round_helper("tb_rnd_bf_rtz", lang, rtz=True),
        "tb_fmaximum": """\
float tb_fmaximum(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? b : a;
  return fmax(a, b);
}""",
        "tb_fminimum": """\
float tb_fminimum(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? a : b;
  return fmin(a, b);
}""",
        "tb_dmaximum": """\
double tb_dmaximum(double a, double b) {
  if (isnan(a) || isnan(b)) return (double)NAN;
  if (a == b) return signbit(a) ? b : a;
  return fmax(a, b);
}""",
        "tb_dminimum": """\
double tb_dminimum(double a, double b) {
  if (isnan(a) || isnan(b)) return (double)NAN;
  if (a == b) return signbit(a) ? a : b;
  return fmin(a, b);
}""",
        "tb_atomic_add_f32": f"""\
float tb_atomic_add_f32(volatile {g}float *p, float v) {{
  uint prev, old = {b("uint", "*p")};
  do {{ prev = old; old = {cas32(f"(volatile {g}uint *)p", "prev", b("uint", b("float", "prev") + " + v"))}; }}
  while (old != prev);
  return {b("float", "old")};
}}""",
        "tb_atomic_add_f64": f"""\
double tb_atomic_add_f64(volatile {g}double *p, double v) {{
  ulong prev, old = {b("ulong", "*p")};
  do {{ prev = old; old = {cas64(f"(volatile {g}ulong *)p", "prev", b("ulong", b("double", "prev") + " + v"))}; }}
  while (old != prev);
  return {b("double", "old")};
}}""",
    }


#: helpers that call other helpers
HELPER_DEPS: dict[str, tuple[str, ...]] = {
    "tb_rnd_h": ("tb_f2h", "tb_h2f"),
    "tb_h2bits": ("tb_f2h",),
    "tb_h2f_load": ("tb_h2f",),
    "tb_rnd_h_rtz": ("tb_f2h_rtz", "tb_h2f"),
}
