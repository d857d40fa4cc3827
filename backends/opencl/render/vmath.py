"""Inline fp32 math. exp on NVIDIA: `tl.exp` as Triton's CUDA path computes it (`approx_fn`). tanh, on every device:
PoCL's built-in never reaches ±1, the helper below does. erf and log on CPU devices (`erf_f32`, `log_f32`).

exp, on CPU devices, where the device compiler vectorizes a tile loop only as well as its math calls: PoCL's `exp`
is the largest part of a softmax there (4096² rows: 4.2 of 11.6 ms). The inline version is branch-free, so it
vectorizes with the loop, and stays within 1 ulp of the correctly rounded result over the whole fp32 range
(subnormal results, overflow to inf, NaN kept; tests/test_opencl_vmath.py checks it on the device).

Algorithm (standard): k = round(x·log2 e) (by adding and subtracting 1.5·2^23: PoCL's rint and clamp are calls
that keep the loop scalar), r = x − k·ln 2 in two parts (Cody–Waite), exp(r) by Cephes' degree-6
polynomial with FMA, then 2^k applied as two exact power-of-two factors so that subnormal results round once.
"""

from __future__ import annotations

from triton_backend_sdk import math_polynomials as P
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Op
from triton_backend_sdk.ir.types import f32

from ..compiler import CPU_FEATURE
from .context import RenderContext
from .language import CStyleLanguage


def _exp_statements(lang: CStyleLanguage, x: str, out: str) -> str:
    """Statements setting `out` to exp(`x`) (locals prefixed by `out`), for tb_exp_f32 and for helpers that inline
    it: PoCL leaves a loop scalar when a helper it calls calls another helper."""

    def scale(e: str) -> str:
        return lang.bitcast("float", f"({e} + 127) << 23")

    v = lambda name: f"{out}_{name}"
    return f"""const float {v("xc")} = {x} < -104.0f ? -104.0f : ({x} > 89.0f ? 89.0f : {x});
  const float {v("k")} = ({v("xc")} * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float {v("r")} = fma({v("k")}, -0.693145751953125f, {v("xc")});
  {v("r")} = fma({v("k")}, -1.428606765330187045e-06f, {v("r")});
  float {v("p")} = 1.9875691500e-4f;
  {v("p")} = fma({v("p")}, {v("r")}, 1.3981999507e-3f);
  {v("p")} = fma({v("p")}, {v("r")}, 8.3334519073e-3f);
  {v("p")} = fma({v("p")}, {v("r")}, 4.1665795894e-2f);
  {v("p")} = fma({v("p")}, {v("r")}, 1.6666665459e-1f);
  {v("p")} = fma({v("p")}, {v("r")}, 5.0000001201e-1f);
  {v("p")} = fma({v("p")}, {v("r")} * {v("r")}, {v("r")}) + 1.0f;
  const int {v("ki")} = (int){v("k")};
  const int {v("k1")} = {v("ki")} >> 1;
  const float {v("y")} = {v("p")} * {scale(v("k1"))} * {scale(f"{v('ki')} - {v('k1')}")};
  const float {out} = {x} != {x} ? {x} : ({x} > 88.72283935546875f ? INFINITY : {v("y")});"""


def exp_f32(lang: CStyleLanguage) -> str:
    """The inline fp32 exp; 2^k is built from its float bits."""
    return f"""inline float tb_exp_f32(float x) {{
  {_exp_statements(lang, "x", "e")}
  return e;
}}"""


def _horner_c(coeffs: list[float], u: str) -> str:
    """Horner's rule over `u` in fmas, highest coefficient first (f32 literals: each is an exact float)."""
    p = f"{coeffs[-1]!r}f"
    for c in reversed(coeffs[:-1]):
        p = f"fma({p}, {u}, {c!r}f)"
    return p


def erf_f32(lang: CStyleLanguage) -> str:
    """The inline fp32 erf (the polynomials of sdk/math_polynomials.py, as cpu_ref computes it): PoCL's `erf` costs
    ~20 ns per element (a GELU through torch.compile ran at 0.4 GB/s); this one vectorizes with the tile loop (|x| and
    the sign by their bits: PoCL's fabs and copysign are calls too; the exp written inline)."""
    a = lang.bitcast("float", f"{lang.bitcast('uint', 'x')} & 0x7fffffffu")
    signed = lang.bitcast("float", f"{lang.bitcast('uint', 'big')} | ({lang.bitcast('uint', 'x')} & 0x80000000u)")
    return f"""{lang.forced_inline} float tb_erf_f32(float x) {{
  const float a = {a};
  const float small = fma(x, {_horner_c(P.ERF_Q, "x * x")}, x);
  const float ac = a < {P.ERF_BIG!r}f ? a : {P.ERF_BIG!r}f;
  const float q = {_horner_c(P.ERF_R, "ac")};
  {_exp_statements(lang, "q", "e")}
  const float big = a >= {P.ERF_BIG!r}f ? 1.0f : 1.0f - e;
  return a < {P.ERF_SMALL!r}f ? small : (x != x ? x : {signed});
}}"""


def log_f32(lang: CStyleLanguage) -> str:
    """The inline fp32 log (cpu_ref's algorithm and polynomial, sdk/math_polynomials.py): x = 2^e·m with m in
    [√½, √2), log1p(m - 1) by its polynomial, e·ln 2 added in two parts; 0.85 ulp. PoCL's `log` costs ~7 ns per
    element and keeps the loop scalar (log-softmax through torch.compile)."""
    bits, mant = lang.bitcast("uint", "xs"), lang.bitcast("float", "(b & 0x7fffffu) | 0x3f800000u")
    return f"""{lang.forced_inline} float tb_log_f32(float x) {{
  const int sub = x < 1.17549435082228751e-38f;
  const float xs = sub ? x * 8388608.0f : x;
  const uint b = {bits};
  const float m0 = {mant};
  const int over = m0 > 1.41421353816986084f;
  const float m = over ? m0 * 0.5f : m0;
  const float e = (float)((int)(b >> 23) - (sub ? 150 : 127) + over);
  const float f = m - 1.0f;
  const float r = (f * f) * fma(f, {_horner_c(P.LOG_S, "f")}, -0.5f);
  const float y = fma(e, {P.LN2_HI!r}f, fma(e, {P.LN2_LO!r}f, r) + f);
  const float z = x == 0.0f ? -INFINITY : (x < 0.0f ? NAN : (x == INFINITY ? x : y));
  return x != x ? x : z;
}}"""


#: PoCL's fp32 tanh never reaches ±1 (it stops at ±0.99999994); the correctly rounded tanh is ±1 from
#: |x| = 9.0109138 (0x41102c34) on, below which the built-in is within 1 ulp
TANH_F32 = """inline float tb_tanh_f32(float x) {
  return fabs(x) >= 9.01091384887695f ? copysign(1.0f, x) : tanh(x);
}"""


def _exp_approx_f32(ctx: RenderContext, exp2: str) -> str:
    """exp(x) as 2^(x·log2 e) by the device's approximate 2^x: the product is rounded once, as on Triton's CUDA path,
    so large |x| lose what the rounding loses (relative error ~ |x|·2^-24 beside the instruction's own)."""
    body = exp2.format(out="y", x="t")
    text = f"inline float tb_exp_approx_f32(float x) {{\n  const float t = x * 1.44269504088896341f;\n  float y;\n  {body}\n  return y;\n}}"
    return ctx.define_helper("tb_exp_approx_f32", text)


#: ops a device may compute approximately where its fp32 precision allows what Triton's CUDA path does: `math.exp`
#: (tl.exp) is `ex2.approx.ftz.f32` of x·log2 e there; libdevice's exp (`sdk.precise_exp`, a subclass) is not
_APPROXIMABLE_F32 = {O.Exp: _exp_approx_f32}


def approx_fn(ctx: RenderContext, op: Op) -> str | None:
    """The device's approximate version of `op` (an fp32 unary float op), or None: keep the precise one."""
    build = _APPROXIMABLE_F32.get(type(op))
    exp2 = ctx.lang.approx_exp2(ctx.features)
    if build is None or exp2 is None or op.result.type.element != f32:
        return None
    return build(ctx, exp2)


def inline_fn(ctx: RenderContext, fn: str, ctype: str) -> str | None:
    """The inline helper replacing the OpenCL built-in `fn` for `ctype` on this device, or None to keep the
    built-in."""
    if fn == "exp" and ctype == "float" and CPU_FEATURE in ctx.features:
        return ctx.define_helper("tb_exp_f32", exp_f32(ctx.lang))
    if fn == "tanh" and ctype == "float":
        return ctx.define_helper("tb_tanh_f32", TANH_F32)
    if fn == "erf" and ctype == "float" and CPU_FEATURE in ctx.features:
        return ctx.define_helper("tb_erf_f32", erf_f32(ctx.lang))
    if fn == "log" and ctype == "float" and CPU_FEATURE in ctx.features:
        return ctx.define_helper("tb_log_f32", log_f32(ctx.lang))
    return None
