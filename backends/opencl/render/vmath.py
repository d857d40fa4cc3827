"""Inline fp32 math. exp on NVIDIA: `tl.exp` as Triton's CUDA path computes it (`approx_fn`). tanh, on every device: PoCL's built-in never reaches ±1, the helper below does.

exp, on CPU devices, where the device compiler vectorizes a tile loop only as well as its math calls: PoCL's `exp`
is the largest part of a softmax there (4096² rows: 4.2 of 11.6 ms). The inline version is branch-free, so it
vectorizes with the loop, and stays within 1 ulp of the correctly rounded result over the whole fp32 range
(subnormal results, overflow to inf, NaN kept; tests/test_opencl_vmath.py checks it on the device).

Algorithm (standard): k = round(x·log2 e) (by adding and subtracting 1.5·2^23: PoCL's rint and clamp are calls
that keep the loop scalar), r = x − k·ln 2 in two parts (Cody–Waite), exp(r) by Cephes' degree-6
polynomial with FMA, then 2^k applied as two exact power-of-two factors so that subnormal results round once.
"""

from __future__ import annotations

from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Op
from triton_backend_sdk.ir.types import f32

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
    return None
