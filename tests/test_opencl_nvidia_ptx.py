"""Golden OpenCL C of NVIDIA's inline-PTX paths, rendered with their descriptor features forced on (PoCL cannot
compile PTX: these only render; the H200 script runs them): a full reduction's partials combined by warp shuffles
(render/warp_reduce.py), `tl.exp` as `ex2.approx.ftz.f32` of x·log2 e (render/vmath.py), and the features' device
derivation (backends/opencl/ptx_features.py). Without the features the portable rendering is unchanged.
"""

from __future__ import annotations

import types

import pytest
from golden_ir import check_lines
from test_opencl_render import FEATURES, render
from triton_backend_sdk.backends.cpu_ref.codegen import RULES as CPU_RULES
from triton_backend_sdk.backends.opencl.render import OPENCL, OPENCL_RULES, render_module
from triton_backend_sdk.backends.opencl.render.language import EXP2_PTX_APPROX, WARP_SHFL_PTX
from triton_backend_sdk.ir import parse_ttir, print_module
from triton_backend_sdk.transforms.math_library import MathLibrary

NV = FEATURES | {WARP_SHFL_PTX, EXP2_PTX_APPROX}

LOAD = """
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %q : tensor<1024x!tt.ptr<f32>>
"""

SUM = (
    LOAD
    + """
    %s = "tt.reduce"(%v) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tt.reduce.return %c : f32
    }) : (tensor<1024xf32>) -> f32
    tt.store %x, %s : !tt.ptr<f32>
"""
)


def _steps(
    acc: str, ctype: str, masks: list[int], first: int, shuffled: str = "as_{t}(tb_shfl_bfly_b32(as_uint({a}), {m}u))"
) -> str:
    """Expected lines of butterfly steps `masks`, numbered from `first`."""
    out = []
    for k, m in enumerate(masks, first):
        o = shuffled.format(t=ctype, a=acc, m=m)
        out += [
            f"const bool up{k} = (lid & {m}u) != 0u;",
            f"const {ctype} o{k} = {o};",
            f"const {ctype} lo{k} = up{k} ? o{k} : {acc}, hi{k} = up{k} ? {acc} : o{k};",
        ]
    return "\n".join(out)


def test_full_sum_by_warp_shuffles_then_one_exchange_of_warp_totals():
    """256 work-items = 8 warps: 5 butterfly steps in the warp, the 8 warp totals through local memory (one barrier
    after the writes, one before so the array is free), then 3 steps over them; every work-item holds the total."""
    src = render(SUM, local_size=256, features=NV)
    check_lines(
        src,
        f"""
        inline uint tb_shfl_bfly_b32(uint x, uint m) {{
        asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(x), "r"(m));
        union tb_scratch {{ float tb_float[8]; }};
        {_steps("acc0", "float", [16, 8, 4, 2, 1], 0)}
        barrier(CLK_LOCAL_MEM_FENCE);
        if ((lid & 31u) == 0u) {{ tb_smem->tb_float[lid >> 5] = acc0; }}
        barrier(CLK_LOCAL_MEM_FENCE);
        acc0 = tb_smem->tb_float[lid & 7u];
        {_steps("acc0", "float", [4, 2, 1], 5)}
        if (lid == 0u) {{ *(a_x0) = acc0; }}
        """,
    )
    assert src.count("barrier(") == 2 and src.count("tb_shfl_bfly_b32(as_uint(") == 8


def test_one_warp_needs_no_local_memory():
    src = render(SUM, local_size=32, features=NV)
    check_lines(src, _steps("acc0", "float", [16, 8, 4, 2, 1], 0))
    assert "barrier(" not in src and "tb_smem" not in src


@pytest.mark.parametrize("local_size", [16, 128])
def test_portable_path_without_the_feature_or_below_a_warp(local_size):
    """No feature (PoCL, other GPUs), or a group smaller than a warp: the local-memory combine as before."""
    features = NV if local_size < 32 else FEATURES
    src = render(SUM, local_size=local_size, features=features)
    assert "asm" not in src and "shfl" not in src
    assert render(SUM, local_size=local_size, features=FEATURES) == src
    check_lines(
        src,
        """
        barrier(CLK_LOCAL_MEM_FENCE);
        tb_smem->tb_float[lid] = acc0;
        barrier(CLK_LOCAL_MEM_FENCE);
        """,
    )


def test_argmin_shuffles_each_operand_and_64_and_8_bit_values_travel_as_32_bit_words():
    """(value, index) pairs: both operands of a pair are exchanged and selected by the same lane bit; i64 goes as two
    32-bit halves (a helper), i8 widened to 32 bits and back."""
    body = (
        LOAD
        + """
    %m:2 = "tt.reduce"(%v, %r) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %ai: i32, %b: f32, %bi: i32):
      %lt = arith.cmpf olt, %a, %b : f32
      %mv = arith.select %lt, %a, %b : f32
      %mi = arith.select %lt, %ai, %bi : i32
      tt.reduce.return %mv, %mi : f32, i32
    }) : (tensor<1024xf32>, tensor<1024xi32>) -> (f32, i32)
    %w = arith.extsi %r : tensor<1024xi32> to tensor<1024xi64>
    %s = "tt.reduce"(%w) <{axis = 0 : i32}> ({
    ^bb0(%a: i64, %b: i64):
      %c = arith.addi %a, %b : i64
      tt.reduce.return %c : i64
    }) : (tensor<1024xi64>) -> i64
    %t = arith.trunci %r : tensor<1024xi32> to tensor<1024xi8>
    %u = "tt.reduce"(%t) <{axis = 0 : i32}> ({
    ^bb0(%a: i8, %b: i8):
      %c = arith.maxsi %a, %b : i8
      tt.reduce.return %c : i8
    }) : (tensor<1024xi8>) -> i8
    tt.store %y, %m#1 : !tt.ptr<i32>
    tt.store %z, %s : !tt.ptr<i64>
    tt.store %c8, %u : !tt.ptr<i8>
"""
    )
    src = render(
        body, args="%x: !tt.ptr<f32>, %y: !tt.ptr<i32>, %z: !tt.ptr<i64>, %c8: !tt.ptr<i8>", local_size=128, features=NV
    )
    check_lines(
        src,
        """
        inline ulong tb_shfl_bfly_b64(ulong x, uint m) {
        uint2 v = as_uint2(x);
        v.s0 = tb_shfl_bfly_b32(v.s0, m); v.s1 = tb_shfl_bfly_b32(v.s1, m);
        return as_ulong(v);
        const bool up0 = (lid & 16u) != 0u;
        const float o0 = as_float(tb_shfl_bfly_b32(as_uint(acc0), 16u));
        const float lo0 = up0 ? o0 : acc0, hi0 = up0 ? acc0 : o0;
        const int o1 = as_int(tb_shfl_bfly_b32(as_uint(acc1), 16u));
        const int lo1 = up0 ? o1 : acc1, hi1 = up0 ? acc1 : o1;
        if ((lid & 31u) == 0u) { tb_smem->tb_float[lid >> 5] = acc0; tb_smem->tb_int[4u + (lid >> 5)] = acc1; }
        acc0 = tb_smem->tb_float[lid & 3u];
        acc1 = tb_smem->tb_int[4u + (lid & 3u)];
        = as_long(tb_shfl_bfly_b64(as_ulong(acc2), 16u));
        = ((char)tb_shfl_bfly_b32((uint)acc3, 16u));
        """,
    )


# ---- tl.exp as Triton's CUDA path computes it; libdevice's exp stays precise ------------------------------------------

EXPS = """
    %v = tt.load %x : !tt.ptr<f32>
    %e = math.exp %v : f32
    %p = tt.extern_elementwise %v {libname = "", libpath = "", pure = true, symbol = "__nv_expf"} : (f32) -> f32
    %h = tt.load %y : !tt.ptr<f16>
    %eh = math.exp %h : f16
    %d = tt.load %z : !tt.ptr<f64>
    %ed = math.exp %d : f64
    %s = arith.addf %e, %p : f32
    tt.store %x, %s : !tt.ptr<f32>
    tt.store %y, %eh : !tt.ptr<f16>
    tt.store %z, %ed : !tt.ptr<f64>
"""
EXP_ARGS = "%x: !tt.ptr<f32>, %y: !tt.ptr<f16>, %z: !tt.ptr<f64>"


class _Target:
    name = "test"


def _after_math_library(rules) -> str:
    from triton_backend_sdk.pipeline import PassContext

    module = parse_ttir(f"module {{\n  tt.func public @k({EXP_ARGS}) {{\n{EXPS}\n    tt.return\n  }}\n}}")
    MathLibrary(rules=rules).run(module, PassContext(None, _Target, {}))  # type: ignore[arg-type]
    return print_module(module)


def _render_exps(features: frozenset[str]) -> str:
    module = parse_ttir(_after_math_library(OPENCL_RULES))
    return render_module(module, "k", OPENCL_RULES, OPENCL, 128, features, "test-device").source


def test_libdevice_exp_is_a_precise_exp_where_the_backend_tells_them_apart():
    """opencl has a rule of its own for `sdk.precise_exp`: libdevice's exp stays one (and reads back); cpu_ref has
    not: it gets a plain math.exp, computed as before."""
    ocl = _after_math_library(OPENCL_RULES)
    check_lines(ocl, "%e = math.exp %v : f32\nsdk.precise_exp %v : f32")
    assert print_module(parse_ttir(ocl)) == ocl
    cpu = _after_math_library(CPU_RULES)
    assert "precise_exp" not in cpu and cpu.count("math.exp") == 4


def test_tl_exp_fp32_is_ex2_approx_on_nvidia_and_libdevice_exp_stays_precise():
    """Only fp32 `math.exp`: libdevice's `__nv_expf`, fp16 (computed in float, rounded to half) and fp64 keep the
    device's exp."""
    src = _render_exps(NV)
    check_lines(
        src,
        """
        inline float tb_exp_approx_f32(float x) {
        const float t = x * 1.44269504088896341f;
        asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(t));
        tb_exp_approx_f32(
        """,
    )
    assert src.count("tb_exp_approx_f32(") == 2  # the definition and the one call
    assert src.count(" exp(") + src.count("(exp(") == 3  # __nv_expf, f16, f64


def test_exp_without_the_feature_is_the_device_exp():
    src = _render_exps(FEATURES)
    assert "asm" not in src and "tb_exp_approx" not in src
    assert src.count(" exp(") + src.count("(exp(") == 4


# ---- which devices get the features -----------------------------------------------------------------------------------


def _device(platform: str, cc_major: int | None, warp: int = 32) -> types.SimpleNamespace:
    def get_info(param: int) -> int:
        if cc_major is None:
            import pyopencl

            raise pyopencl.LogicError("clGetDeviceInfo", pyopencl.status_code.INVALID_VALUE, "no such attribute")
        return {0x4000: cc_major, 0x4003: warp}[param]

    return types.SimpleNamespace(platform=types.SimpleNamespace(name=platform), extensions="", get_info=get_info)


def test_ptx_features_by_device():
    pytest.importorskip("pyopencl")
    from triton_backend_sdk.backends.opencl.ptx_features import ptx_features

    assert ptx_features(_device("NVIDIA CUDA", 9)) == {WARP_SHFL_PTX, EXP2_PTX_APPROX}
    assert ptx_features(_device("NVIDIA CUDA", 7)) == {WARP_SHFL_PTX, EXP2_PTX_APPROX}
    assert ptx_features(_device("NVIDIA CUDA", 6)) == {EXP2_PTX_APPROX}
    assert ptx_features(_device("NVIDIA CUDA", 9, warp=64)) == {EXP2_PTX_APPROX}
    assert ptx_features(_device("NVIDIA CUDA", None)) == {EXP2_PTX_APPROX}
    assert ptx_features(_device("Portable Computing Language", None)) == set()
