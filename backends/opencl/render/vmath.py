"""Inline fp32 math. tanh, on every device: PoCL's built-in never reaches ±1, the helper below does.

exp, on CPU devices, where the device compiler vectorizes a tile loop only as well as its math calls: PoCL's `exp`
is the largest part of a softmax there (4096² rows: 4.2 of 11.6 ms). The inline version is branch-free, so it
vectorizes with the loop, and stays within 1 ulp of the correctly rounded result over the whole fp32 range
(subnormal results, overflow to inf, NaN kept; tests/test_opencl_vmath.py checks it on the device).

Algorithm (standard): k = round(x·log2 e) (by adding and subtracting 1.5·2^23: PoCL's rint and clamp are calls
that keep the loop scalar), r = x − k·ln 2 in two parts (Cody–Waite), exp(r) by Cephes' degree-6
polynomial with FMA, then 2^k applied as two exact power-of-two factors so that subnormal results round once.
"""

from __future__ import annotations

from ..compiler import CPU_FEATURE
from .context import RenderContext
from .language import CStyleLanguage


def exp_f32(lang: CStyleLanguage) -> str:
    """The inline fp32 exp; 2^k is built from its float bits."""

    def scale(e: str) -> str:
        return lang.bitcast("float", f"({e} + 127) << 23")

    return f"""inline float tb_exp_f32(float x) {{
  const float xc = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);
  const float k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = fma(k, -0.693145751953125f, xc);
  r = fma(k, -1.428606765330187045e-06f, r);
  float p = 1.9875691500e-4f;
  p = fma(p, r, 1.3981999507e-3f);
  p = fma(p, r, 8.3334519073e-3f);
  p = fma(p, r, 4.1665795894e-2f);
  p = fma(p, r, 1.6666665459e-1f);
  p = fma(p, r, 5.0000001201e-1f);
  p = fma(p, r * r, r) + 1.0f;
  const int ki = (int)k;
  const int k1 = ki >> 1;
  const float y = p * {scale("k1")} * {scale("ki - k1")};
  return x != x ? x : (x > 88.72283935546875f ? INFINITY : y);
}}"""


#: PoCL's fp32 tanh never reaches ±1 (it stops at ±0.99999994); the correctly rounded tanh is ±1 from
#: |x| = 9.0109138 (0x41102c34) on, below which the built-in is within 1 ulp
TANH_F32 = """inline float tb_tanh_f32(float x) {
  return fabs(x) >= 9.01091384887695f ? copysign(1.0f, x) : tanh(x);
}"""


def inline_fn(ctx: RenderContext, fn: str, ctype: str) -> str | None:
    """The inline helper replacing the OpenCL built-in `fn` for `ctype` on this device, or None to keep the
    built-in."""
    if fn == "exp" and ctype == "float" and CPU_FEATURE in ctx.features:
        return ctx.define_helper("tb_exp_f32", exp_f32(ctx.lang))
    if fn == "tanh" and ctype == "float":
        return ctx.define_helper("tb_tanh_f32", TANH_F32)
    return None
