"""math dialect ops (`tl.exp`, `tl.sqrt`, ...), Triton's precise/fast float ops, and libdevice functions (which
arrive as `tt.extern_elementwise` with `__nv_*` symbols), each against torch in float64."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from . import Case, Launch, register
from .inputs import FLOATS, rand

F32_64 = ("float32", "float64")
from .tolerance import EXACT, Tolerance, ulp


def _approx_exp_f32(n: float) -> Callable[[str], Tolerance]:
    """ulp(n) for float64; for float32 what Triton's CUDA path gives `tl.exp` (ex2.approx.ftz.f32 of x·log2 e, 2 ulp
    of its own plus ~1.22·|x| ulp from the rounded product: <= 12.3 ulp for |x| <= 8, 16 with margin; its own run
    fails ulp(2) on 127 of 777, benchmarks/results/h200/cuda_goldens_outcomes.txt), which the opencl backend
    computes on NVIDIA too."""
    return lambda dtype: ulp(16) if dtype == "float32" else ulp(n)


BLOCK = 128
SHAPES = ((1,), (777,))


@triton.jit
def math_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    y = tl.load(y_ptr + offs, mask=mask, other=1)
    z = tl.load(z_ptr + offs, mask=mask, other=1)
    if OP == "exp":
        r = tl.exp(x)
    elif OP == "exp2":
        r = tl.exp2(x)
    elif OP == "log":
        r = tl.log(x)
    elif OP == "log2":
        r = tl.log2(x)
    elif OP == "sin":
        r = tl.sin(x)
    elif OP == "cos":
        r = tl.cos(x)
    elif OP == "sqrt":
        r = tl.sqrt(x)
    elif OP == "sqrt_rn":
        r = tl.sqrt_rn(x)
    elif OP == "rsqrt":
        r = tl.rsqrt(x)
    elif OP == "floor":
        r = tl.floor(x)
    elif OP == "ceil":
        r = tl.ceil(x)
    elif OP == "erf":
        r = tl.erf(x)
    elif OP == "fma":
        r = tl.fma(x, y, z)
    elif OP == "div_rn":
        r = tl.div_rn(x, y)
    elif OP == "fdiv":
        r = tl.fdiv(x, y)
    elif OP == "sigmoid":
        r = tl.sigmoid(x)
    elif OP == "clamp":
        r = tl.clamp(x, -1.5, 2.25, propagate_nan=tl.PropagateNan.ALL)
    elif OP == "maximum_nan":
        r = tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
    elif OP == "minimum_nan":
        r = tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)
    elif OP == "tanh":
        r = libdevice.tanh(x)
    elif OP == "tan":
        r = libdevice.tan(x)
    elif OP == "asin":
        r = libdevice.asin(x)
    elif OP == "acos":
        r = libdevice.acos(x)
    elif OP == "atan":
        r = libdevice.atan(x)
    elif OP == "sinh":
        r = libdevice.sinh(x)
    elif OP == "cosh":
        r = libdevice.cosh(x)
    elif OP == "asinh":
        r = libdevice.asinh(x)
    elif OP == "acosh":
        r = libdevice.acosh(x)
    elif OP == "atanh":
        r = libdevice.atanh(x)
    elif OP == "expm1":
        r = libdevice.expm1(x)
    elif OP == "log1p":
        r = libdevice.log1p(x)
    elif OP == "log10":
        r = libdevice.log10(x)
    elif OP == "cbrt":
        r = libdevice.cbrt(x)
    elif OP == "erfc":
        r = libdevice.erfc(x)
    elif OP == "erfinv":
        r = libdevice.erfinv(x)
    elif OP == "lgamma":
        r = libdevice.lgamma(x)
    elif OP == "pow":
        r = libdevice.pow(x, y)
    elif OP == "atan2":
        r = libdevice.atan2(x, y)
    elif OP == "hypot":
        r = libdevice.hypot(x, y)
    elif OP == "fmod":
        r = libdevice.fmod(x, y)
    elif OP == "rint":
        r = libdevice.rint(x * 3.0)
    elif OP == "trunc":
        r = libdevice.trunc(x * 3.0)
    elif OP == "round":
        r = libdevice.round(x * 3.0)
    elif OP == "isnan":
        r = libdevice.isnan(tl.where(y > 0, x, float("nan"))).to(x.dtype)
    elif OP == "signbit":
        r = (libdevice.signbit(x) != 0).to(x.dtype)
    elif OP == "rcp_rn":
        r = libdevice.rcp_rn(x)
    elif OP == "float2int_rz":
        if x.dtype == tl.float64:
            r = libdevice.double2int_rz(x * 10.0).to(x.dtype)
        else:
            r = libdevice.float2int_rz(x * 10.0).to(x.dtype)
    elif OP == "float_as_int":
        r = libdevice.int_as_float(libdevice.float_as_int(x) ^ 1)
    else:
        tl.static_assert(False, "unknown op")
    tl.store(out_ptr + offs, r, mask=mask)


def _exact_fma(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """x * y + z rounded once (float64 arithmetic would round the product first)."""
    vals = [float(Fraction(a) * Fraction(b) + Fraction(c)) for a, b, c in zip(x.tolist(), y.tolist(), z.tolist())]
    return torch.tensor(vals, dtype=torch.float64).reshape(x.shape)


def _trunc_to_int(v: torch.Tensor) -> torch.Tensor:
    return torch.trunc(v)


def _flip_lsb(x: torch.Tensor) -> torch.Tensor:
    return (x.view(torch.int32) ^ 1).view(torch.float32).double()


#: op -> (reference on float64 inputs x, y, z, dtypes, (lo, hi, signed) of x, tolerance)
_OPS = {
    "exp": (lambda x, y, z: torch.exp(x), F32_64, (0.1, 8, True), _approx_exp_f32(2)),
    "exp2": (lambda x, y, z: torch.exp2(x), F32_64, (0.1, 8, True), ulp(2)),
    "log": (lambda x, y, z: torch.log(x), F32_64, (0.01, 100, False), ulp(2)),
    "log2": (lambda x, y, z: torch.log2(x), F32_64, (0.01, 100, False), ulp(2)),
    "sin": (lambda x, y, z: torch.sin(x), F32_64, (0.1, 6, True), ulp(2)),
    "cos": (lambda x, y, z: torch.cos(x), F32_64, (0.1, 6, True), ulp(2)),
    "sqrt": (lambda x, y, z: torch.sqrt(x), F32_64, (0.01, 100, False), ulp(0.5001)),
    "sqrt_rn": (lambda x, y, z: torch.sqrt(x), ("float32",), (0.01, 100, False), ulp(0.5001)),
    "rsqrt": (lambda x, y, z: torch.rsqrt(x), F32_64, (0.01, 100, False), ulp(1.5)),
    "floor": (lambda x, y, z: torch.floor(x), F32_64, (0.1, 50, True), EXACT),
    "ceil": (lambda x, y, z: torch.ceil(x), F32_64, (0.1, 50, True), EXACT),
    "erf": (lambda x, y, z: torch.erf(x), F32_64, (0.05, 3, True), ulp(2)),
    "fma": (lambda x, y, z: _exact_fma(x, y, z), FLOATS, (0.5, 4, True), ulp(0.5001)),
    "div_rn": (lambda x, y, z: x / y, ("float32",), (0.5, 4, True), ulp(0.5001)),
    "fdiv": (lambda x, y, z: x / y, FLOATS, (0.5, 4, True), ulp(1)),
    "sigmoid": (lambda x, y, z: torch.sigmoid(x), F32_64, (0.1, 8, True), _approx_exp_f32(3)),
    "clamp": (lambda x, y, z: torch.clamp(x, -1.5, 2.25), FLOATS, (0.1, 4, True), EXACT),
    "maximum_nan": (lambda x, y, z: torch.maximum(x, y), FLOATS, (0.1, 4, True), EXACT),
    "minimum_nan": (lambda x, y, z: torch.minimum(x, y), FLOATS, (0.1, 4, True), EXACT),
    "tanh": (lambda x, y, z: torch.tanh(x), ("float32", "float64"), (0.05, 4, True), ulp(4)),
    "tan": (lambda x, y, z: torch.tan(x), ("float32", "float64"), (0.05, 1.4, True), ulp(4)),
    "asin": (lambda x, y, z: torch.asin(x), ("float32", "float64"), (0.01, 0.99, True), ulp(4)),
    "acos": (lambda x, y, z: torch.acos(x), ("float32", "float64"), (0.01, 0.99, True), ulp(4)),
    "atan": (lambda x, y, z: torch.atan(x), ("float32", "float64"), (0.05, 10, True), ulp(4)),
    "sinh": (lambda x, y, z: torch.sinh(x), ("float32", "float64"), (0.05, 5, True), ulp(4)),
    "cosh": (lambda x, y, z: torch.cosh(x), ("float32", "float64"), (0.05, 5, True), ulp(4)),
    "asinh": (lambda x, y, z: torch.asinh(x), ("float32", "float64"), (0.05, 10, True), ulp(4)),
    "acosh": (lambda x, y, z: torch.acosh(x), ("float32", "float64"), (1.01, 10, False), ulp(4)),
    "atanh": (lambda x, y, z: torch.atanh(x), ("float32", "float64"), (0.01, 0.95, True), ulp(4)),
    "expm1": (lambda x, y, z: torch.expm1(x), ("float32", "float64"), (0.01, 5, True), ulp(4)),
    "log1p": (lambda x, y, z: torch.log1p(x), ("float32", "float64"), (0.01, 5, False), ulp(4)),
    "log10": (lambda x, y, z: torch.log10(x), ("float32", "float64"), (0.01, 100, False), ulp(4)),
    "cbrt": (lambda x, y, z: torch.sign(x) * x.abs().pow(1 / 3), ("float32", "float64"), (0.01, 100, True), ulp(4)),
    "erfc": (lambda x, y, z: torch.erfc(x), ("float32", "float64"), (0.05, 3, True), ulp(4)),
    "erfinv": (lambda x, y, z: torch.erfinv(x), ("float32", "float64"), (0.01, 0.99, True), ulp(16)),
    "lgamma": (lambda x, y, z: torch.lgamma(x), ("float32", "float64"), (0.1, 10, False), ulp(8)),
    "pow": (lambda x, y, z: torch.pow(x, y), ("float32", "float64"), (0.1, 3, False), ulp(4)),
    "atan2": (lambda x, y, z: torch.atan2(x, y), ("float32", "float64"), (0.1, 3, True), ulp(4)),
    "hypot": (lambda x, y, z: torch.hypot(x, y), ("float32", "float64"), (0.1, 3, True), ulp(2)),
    "fmod": (lambda x, y, z: torch.fmod(x, y), ("float32", "float64"), (0.1, 30, True), EXACT),
    "rint": (lambda x, y, z: torch.round(x * 3), ("float32", "float64"), (0.1, 9, True), EXACT),
    "trunc": (lambda x, y, z: torch.trunc(x * 3), ("float32", "float64"), (0.1, 9, True), EXACT),
    "round": (
        lambda x, y, z: torch.sign(x * 3) * torch.floor((x * 3).abs() + 0.5),
        ("float32", "float64"),
        (0.1, 9, True),
        EXACT,
    ),
    "isnan": (lambda x, y, z: (y <= 0).double(), ("float32", "float64"), (0.1, 9, True), EXACT),
    "signbit": (lambda x, y, z: (x < 0).double(), ("float32", "float64"), (0.1, 9, True), EXACT),
    "rcp_rn": (lambda x, y, z: 1 / x, F32_64, (0.1, 9, True), ulp(0.5001)),
    "float2int_rz": (lambda x, y, z: _trunc_to_int(x * 10), F32_64, (0.1, 9, True), EXACT),
    "float_as_int": (lambda x, y, z: _flip_lsb(x.float()), ("float32",), (0.1, 9, True), EXACT),
}


_NAN_OPS = ("clamp", "maximum_nan", "minimum_nan")
#: the TTIR op each core (non-libdevice) function becomes
_TTIR = {
    "exp": "math.exp",
    "exp2": "math.exp2",
    "log": "math.log",
    "log2": "math.log2",
    "sin": "math.sin",
    "cos": "math.cos",
    "sqrt": "math.sqrt",
    "sqrt_rn": "tt.precise_sqrt",
    "rsqrt": "math.rsqrt",
    "floor": "math.floor",
    "ceil": "math.ceil",
    "erf": "math.erf",
    "fma": "math.fma",
    "div_rn": "tt.precise_divf",
    "fdiv": "arith.divf",
    "sigmoid": "math.exp",
    "clamp": "tt.clampf",
    "maximum_nan": "arith.maximumf",
    "minimum_nan": "arith.minimumf",
}


def _case(op: str, nan: bool = False) -> Case:
    fn, dtypes, (lo, hi, signed), tol = _OPS[op]

    def build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
        x = rand(shape, dtype, g, lo, hi, signed)
        y = rand(shape, dtype, g, 0.5 if op != "pow" else 0.1, 4 if op != "pow" else 3, op != "pow")
        z = rand(shape, dtype, g, 0.5, 4)
        if nan:  # drawn last, so that the NaN-free variant's inputs stay the same
            x = torch.where(torch.rand(shape, generator=g) < 0.2, torch.tensor(float("nan"), dtype=x.dtype), x)
        n = shape[0]
        return Launch([x, y, z, torch.empty_like(x), n], (triton.cdiv(n, BLOCK),), (3,), {"OP": op, "BLOCK": BLOCK})

    def reference(launch: Launch, dtype: str) -> list[torch.Tensor]:
        x, y, z = (launch.args[i].double() for i in range(3))
        if op in ("rint", "trunc", "round", "float2int_rz"):
            x = (launch.args[0] * (10.0 if op == "float2int_rz" else 3.0)).double() / (
                10.0 if op == "float2int_rz" else 3.0
            )
        return [fn(x, y, z)]

    return register(
        Case(
            f"math_{op}{'_with_nan' if nan else ''}",
            _TTIR.get(op, "tt.extern_elementwise"),
            math_kernel,
            dtypes,
            SHAPES,
            build,
            reference,
            tol,
        )
    )


for _op in _OPS:
    _case(_op)
for _op in _NAN_OPS:  # NaN must propagate through these
    _case(_op, nan=True)

assert math.isfinite(1.0)
