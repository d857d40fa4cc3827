"""Golden OpenCL C per rule family, and compile-time errors: TTIR in, expected lines of OpenCL C out, in order.

No OpenCL device is needed: these call the renderer directly with a device description. `check_lines` is the tiny
FileCheck of tests/golden_ir.py, shared with the cpu_ref golden tests.
"""

from __future__ import annotations

import pytest
from golden_ir import check_lines
from triton_backend_sdk.backends.opencl.render import OPENCL, OPENCL_RULES, render_module
from triton_backend_sdk.errors import LoweringError, UnsupportedError
from triton_backend_sdk.ir import parse_ttir

FEATURES = frozenset({"cl_khr_fp64", "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"})


def render(
    body: str,
    args: str = "%x: !tt.ptr<f32>, %n: i32",
    local_size: int = 128,
    features: frozenset[str] = FEATURES,
    vector_bits: int = 128,
) -> str:
    text = f"""module {{
  tt.func public @k({args}) {{
{body}
    tt.return
  }}
}}"""
    module = parse_ttir(text)
    return render_module(
        module, "k", OPENCL_RULES, OPENCL, local_size, features, "test-device", True, vector_bits
    ).source


LOAD_1024 = """
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %s = tt.splat %n : i32 -> tensor<1024xi32>
    %m = arith.cmpi slt, %r, %s : tensor<1024xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %q, %m : tensor<1024x!tt.ptr<f32>>
"""


def test_kernel_abi_and_canonical_layout():
    """Pointers arrive as (buffer, byte offset); one program is one work-group of fixed size; a 1024-element tile is
    8 register slots per work-item in runs of 4 (elements 4*(g*128+lid)+k), read and written as one 128-bit access
    where the run is unmasked: its pointers are proven consecutive (AxisInfo) but not aligned (`%x` has no
    `tt.divisibility`), so vload4/vstore4; the ragged mask is checked at run time, else element by element."""
    src = render(
        LOAD_1024
        + """
    %c = arith.constant dense<2.000000e+00> : tensor<1024xf32>
    %w = arith.mulf %v, %c : tensor<1024xf32>
    tt.store %q, %w, %m : tensor<1024x!tt.ptr<f32>>
""",
        args="%x: !tt.ptr<f32>, %n: i32, %b: i1",
    )
    check_lines(
        src,
        """
        __attribute__((reqd_work_group_size(128, 1, 1)))
        __kernel void tb_k(__global float *a_x0_base, ulong a_x0_off, int a_n0, char a_b0_raw, int tb_grid0, int tb_grid1, int tb_grid2) {
        const uint lid = (uint)get_local_id(0);
        const int tb_pid0 = (int)(get_group_id(0) + get_global_offset(0) / 128u), tb_npid0 = tb_grid0;
        __global float *a_x0 = (__global float *)((__global char *)a_x0_base + a_x0_off);
        bool a_b0 = a_b0_raw != 0;
        float t_v0[8];
        #pragma unroll
        for (uint g0 = 0u; g0 < 2u; ++g0) {
        __global float *p0 = (a_x0 + ((int)(((g0 * 128u + lid) << 2u) + 0u)));
        const bool m3 = (((int)(((g0 * 128u + lid) << 2u) + 3u)) < a_n0);
        if (m0 && m1 && m2 && m3) {
        const float4 v0 = vload4(0, p0);
        t_v0[(g0 << 2u) + 3u] = v0.s3;
        } else {
        t_v0[(g0 << 2u) + 0u] = (m0 ? *(p0) : 0.0f);
        for (uint g1 = 0u; g1 < 2u; ++g1) {
        const float x0 = (t_v0[((g1 << 2u) + 0u)] * 2.0f);
        vstore4((float4)(x0, x1, x2, x3), 0, p1);
        if (m7) *((p1 + 3)) = x3;
    """,
    )
    assert "barrier" not in src and "tb_smem" not in src  # elementwise work needs no local memory


def test_small_tile_is_duplicated_and_stored_by_its_owner():
    src = render("""
    %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %f = arith.sitofp %r : tensor<32xi32> to tensor<32xf32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    tt.store %q, %f : tensor<32x!tt.ptr<f32>>
""")
    check_lines(
        src,
        """
        const uint i0 = lid & 31u;
        if (lid < 32u) {
        *((a_x0 + ((int)i0))) = ((float)((int)i0));
    """,
    )


SUM_1024 = (
    LOAD_1024
    + """
    %z = "tt.reduce"(%v) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %s2 = arith.addf %a, %b : f32
      tt.reduce.return %s2 : f32
    }) : (tensor<1024xf32>) -> f32
    tt.store %x, %z : !tt.ptr<f32>
"""
)


def test_full_reduction_is_per_work_item_then_two_barriers():
    """128 partials: 16 work-items combine 8 each, then every work-item combines the 16 (no tree of 7 barriers)."""
    src = render(SUM_1024)
    check_lines(
        src,
        """
        union tb_scratch { float tb_float[144]; };
        __local union tb_scratch tb_smem_area __attribute__((aligned(16)));
        float acc0;
        for (uint r0 = 0u; r0 < 8u; ++r0) {
        if (r0 == 0u) { acc0 = x0; } else
        acc0 = v_s2_0;
        barrier(CLK_LOCAL_MEM_FENCE);
        tb_smem->tb_float[lid] = acc0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < 16u) {
        for (uint k0 = 1u; k0 < 8u; ++k0)
        tb_smem->tb_float[128u + lid] = acc0;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc0 = tb_smem->tb_float[128u];
        for (uint k1 = 1u; k1 < 16u; ++k1)
        if (lid == 0u) { *(a_x0) = acc0; }
    """,
    )
    assert src.count("barrier(") == 3


def test_one_work_item_reduces_in_16_lanes_without_barriers():
    """A CPU device's one-work-item program (256-bit vectors, PoCL on AVX2): the 1024 elements in 16 independent
    partial lanes, two float8 vectors updated a chunk of 16 at a time from an aligned chunk array, then the lanes;
    the load is read inside the walk (its only consumer, nothing written in between)."""
    src = render(SUM_1024, local_size=1, vector_bits=256)
    check_lines(
        src,
        """
        float8 vlane0; float8 vlane1;
        float chunk0[16] __attribute__((aligned(64)));
        for (uint j0 = 0u; j0 < 16u; ++j0) {
        float x0 = ((((int)(j0)) < a_n0) ? *((a_x0 + ((int)(j0)))) : 0.0f);
        chunk0[j0] = x0;
        vlane0 = vx0;
        for (uint q0 = 1u; q0 < 64u; ++q0) {
        float x1 = ((((int)(q0 * 16u + j0)) < a_n0) ? *((a_x0 + ((int)(q0 * 16u + j0)))) : 0.0f);
        const float8 vx2 = *((const float8 *)(chunk0 + 0u));
        vlane0 = (vlane0 + vx2);
        vlane1 = (vlane1 + vx3);
        vlane0 = (vlane0 + vlane1);
        float fold0 = vlane0.s0;
        fold0 = v_s2_6;
        acc0 = fold0;
        if (lid == 0u) { *(a_x0) = acc0; }
    """,
    )
    assert "barrier(" not in src and "tb_smem" not in src


def test_broadcast_of_a_register_tile_goes_through_local_memory():
    src = render("""
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %v = tt.load %q : tensor<16x!tt.ptr<f32>>
    %e = tt.expand_dims %v {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %b = tt.broadcast %e : tensor<16x1xf32> -> tensor<16x16xf32>
    %r2 = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %o = tt.reshape %r2 : tensor<256xi32> -> tensor<16x16xi32>
    %p2 = tt.splat %x : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
    %q2 = tt.addptr %p2, %o : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
    tt.store %q2, %b : tensor<16x16x!tt.ptr<f32>>
""")
    check_lines(
        src,
        """
        float t_v0[1];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < 16u) {
        tb_smem->tb_float[i2] = t_v0[r2];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint r1 = 0u; r1 < 2u; ++r1) {
        = tb_smem->tb_float[((i1 >> 4))];
    """,
    )


def test_fp16_lives_in_float_rounded_after_every_op_and_uses_half_loads():
    """Half loads and stores, except for NaNs, which move by their bits (the widening quiets a signaling NaN)."""
    src = render(
        """
    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %p = tt.splat %x : !tt.ptr<f16> -> tensor<128x!tt.ptr<f16>>
    %q = tt.addptr %p, %r : tensor<128x!tt.ptr<f16>>, tensor<128xi32>
    %v = tt.load %q : tensor<128x!tt.ptr<f16>>
    %w = arith.addf %v, %v : tensor<128xf16>
    tt.store %q, %w : tensor<128x!tt.ptr<f16>>
""",
        args="%x: !tt.ptr<f16>",
    )
    check_lines(
        src,
        """
        float tb_h2f(ushort h) {
        float tb_h2f_load(float widened, ushort h) {
        ushort tb_f2h(float f) {
        float tb_rnd_h(float x) { return tb_h2f(tb_f2h(x)); }
        ushort tb_h2bits(float f) {
        __kernel void tb_k(__global ushort *a_x0_base, ulong a_x0_off, int tb_grid0, int tb_grid1, int tb_grid2) {
        = tb_h2f_load(vload_half(0, (const __global half *)((a_x0 + ((int)i0)))), *((a_x0 + ((int)i0))));
        { float tb_v = tb_rnd_h((t_v0[r1] + t_v0[r1])); if (isnan(tb_v)) *((a_x0 + ((int)i1))) = tb_h2bits(tb_v);
    """,
    )
    assert "else vstore_half_rte(tb_v, 0, (__global half *)((a_x0 + ((int)i1)))); }" in src
    assert "cl_khr_fp16" not in src


def test_float_atomic_add_is_a_cas_loop_with_fences():
    src = render("""
    %c = arith.constant 1.000000e+00 : f32
    %o = tt.atomic_rmw fadd, acq_rel, gpu, %x, %c : (!tt.ptr<f32>, f32) -> f32
""")
    check_lines(
        src,
        """
        float tb_atomic_add_f32(volatile __global float *p, float v) {
        old = atomic_cmpxchg((volatile __global uint *)p, prev, as_uint(as_float(prev) + v));
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0u) { mem_fence(CLK_GLOBAL_MEM_FENCE); tb_smem->tb_float[0] = tb_atomic_add_f32(
        barrier(CLK_LOCAL_MEM_FENCE);
        float v_o0 = tb_smem->tb_float[0];
    """,
    )


def test_integer_division_and_shifts_do_not_trap():
    """The guards come from the shared legalization (sdk/transforms/int_semantics.py); opencl renders plain C."""
    from golden_ir import legalized

    text = """module {
  tt.func public @k(%x: !tt.ptr<f32>, %n: i32) {
    %d = arith.divsi %n, %n : i32
    %s = arith.shli %d, %n : i32
    tt.return
  }
}"""
    module = legalized(parse_ttir(text))
    src = render_module(module, "k", OPENCL_RULES, OPENCL, 128, FEATURES, "test-device").source
    check_lines(
        src,
        """
        bool v0 = (a_n0 == 0);
        bool v1 = (a_n0 == -1);
        int v3 = (v2 ? 1 : a_n0);
        int v4 = ((int)(a_n0 / v3));
        int v_d0 = (v0 ? -1 : v6);
        bool v7 = ((uint)a_n0 >= (uint)32);
        int v8 = (a_n0 & 31);
        int v9 = ((int)((uint)v_d0 << (uint)v8));
        int v_s0 = (v7 ? 0 : v9);
    """,
    )
    assert "tb_divs" not in src and "tb_shl" not in src


def test_char_and_short_expressions_keep_their_type():
    """C promotes char/short operands to int: a bitwise op or select on i16 is cast back to short, built-ins
    overloaded on the type get short operands (`max(short, int)` is ambiguous), and a product wraps in uint
    (0xffff * 0xffff overflows int); i32 needs none of it."""
    src = render(
        """
    %x = arith.xori %a, %b : i16
    %m = arith.maxsi %a, %x : i16
    %s = arith.select %c, %a, %b : i16
    %z = math.ctlz %x : i16
    %p = math.ctpop %s : i16
    %u = arith.muli %a, %b : i16
    %w = arith.andi %i, %i : i32
    %v = arith.select %c, %i, %w : i32
""",
        args="%a: i16, %b: i16, %c: i1, %i: i32",
    )
    check_lines(
        src,
        """
        short v_x0 = ((short)(a_a0 ^ a_b0));
        short v_m0 = max((short)a_a0, (short)v_x0);
        short v_s0 = ((short)(a_c0 ? a_a0 : a_b0));
        short v_z0 = ((short)clz((short)v_x0));
        short v_p0 = ((short)popcount((short)v_s0));
        short v_u0 = ((short)((uint)a_a0 * (uint)a_b0));
        int v_w0 = (a_i0 & a_i0);
        int v_v0 = (a_c0 ? a_i0 : v_w0);
    """,
    )


def test_integer_abs_negates_in_the_unsigned_type():
    """abs(INT_MIN) == INT_MIN as in Triton: not OpenCL's abs(), whose unsigned result PoCL's compiler takes as
    non-negative; char/short negate in uint (ushort would promote to int)."""
    src = render(
        """
    %y = math.absi %i : i32
    %z = math.absi %a : i16
""",
        args="%a: i16, %i: i32",
    )
    check_lines(
        src,
        """
        int tb_abs_int(int x) { return (int)(x < 0 ? (uint)0 - (uint)x : (uint)x); }
        short tb_abs_short(short x) { return (short)(x < 0 ? (uint)0 - (uint)x : (uint)x); }
        int v_y0 = tb_abs_int(a_i0);
        short v_z0 = tb_abs_short(a_a0);
    """,
    )


def test_fp64_without_the_extension_is_refused_naming_dtype_and_device():
    with pytest.raises(UnsupportedError, match=r"fp64.*test-device.*cl_khr_fp64"):
        render("", args="%x: !tt.ptr<f64>", features=frozenset())


def test_int64_atomics_without_the_extension_are_refused():
    with pytest.raises(UnsupportedError, match=r"i64 atomics.*cl_khr_int64_base_atomics"):
        render(
            """
    %c = arith.constant 1 : i64
    %o = tt.atomic_rmw add, acq_rel, gpu, %x, %c : (!tt.ptr<i64>, i64) -> i64
""",
            args="%x: !tt.ptr<i64>",
            features=frozenset({"cl_khr_fp64"}),
        )


def test_op_without_a_rule_names_op_dtype_and_line():
    with pytest.raises(LoweringError, match=r"\[opencl\] no lowering rule for op 'tt.mystery' with dtype i32"):
        render("""
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %h = "tt.mystery"(%r) : (tensor<16xi32>) -> tensor<16xi32>
""")


def test_fp8_lives_in_float_and_is_a_byte_in_memory():
    """A conversion rounds and saturates (enc); a store gives the byte a load decoded back (code: an e5m2 inf or
    NaN stays as it was; e4m3's encoder already inverts its decoder)."""
    src = render(
        """
    %v = tt.load %x : !tt.ptr<f8E5M2>
    %w = tt.fp_to_fp %v : f8E5M2 -> f32
    %y = tt.fp_to_fp %w, rounding = rtne : f32 -> f8E4M3FN
    tt.store %x2, %y : !tt.ptr<f8E4M3FN>
    tt.store %x, %v : !tt.ptr<f8E5M2>
""",
        args="%x: !tt.ptr<f8E5M2>, %x2: !tt.ptr<f8E4M3FN>",
    )
    check_lines(
        src,
        """
        float tb_e5m2_dec(uchar b) {
        float tb_e4m3_dec(uchar b) {
        uchar tb_e4m3_enc(float f) {
        uchar tb_e5m2_code(float f) {
        __kernel void tb_k(__global uchar *a_x0_base, ulong a_x0_off, __global uchar *a_x2_0_base, ulong a_x2_0_off, int tb_grid0, int tb_grid1, int tb_grid2) {
        float v_v0 = tb_e5m2_dec(*(a_x0));
        float v_y0 = tb_e4m3_dec(tb_e4m3_enc(v_v0));
        if (lid == 0u) { *(a_x2_0) = tb_e4m3_enc(v_y0); }
        if (lid == 0u) { *(a_x0) = tb_e5m2_code(v_v0); }
    """,
    )


def test_one_work_item_reduction_lanes_follow_the_devices_vector_width():
    """The lanes are the shared tile model's reduction plan with at most 2 accumulators: 8 x 2 on a 256-bit device
    (the test above), 4 x 2 on a 128-bit one."""
    src = render(SUM_1024, local_size=1, vector_bits=128)
    check_lines(
        src,
        """
        float4 vlane0; float4 vlane1;
        float chunk0[8] __attribute__((aligned(64)));
        for (uint q0 = 1u; q0 < 128u; ++q0) {
        for (uint j0 = 0u; j0 < 8u; ++j0) {
        float fold0 = vlane0.s0;
    """,
    )
    assert "vlane0.s3" in src and "vlane0.s4" not in src


DOT_16 = """
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %v = tt.load %q : tensor<256x!tt.ptr<f32>>
    %a = tt.reshape %v : tensor<256xf32> -> tensor<16x16xf32>
    %c = arith.constant dense<0.0> : tensor<16x16xf32>
    %d = tt.dot %a, %a, %c : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    %e = tt.reshape %d : tensor<16x16xf32> -> tensor<256xf32>
    tt.store %q, %e : tensor<256x!tt.ptr<f32>>
"""


@pytest.mark.parametrize("bits,rows,vectors,lanes", [(256, 4, 2, 8), (128, 2, 4, 4)])
def test_one_work_item_dot_register_block_follows_the_devices_vector_width(bits, rows, vectors, lanes):
    """A CPU device's one-work-item dot: the register block is the shared tile model's (`register_block`), R rows
    x NV vectors of V lanes, as cpu_ref blocks it for that vector width."""
    body = render(DOT_16, local_size=1, vector_bits=bits)
    check_lines(
        body,
        f"""
        for (uint m0 = 0u; m0 < 16u; m0 += {rows}u)
        for (uint n0 = 0u; n0 < 16u; n0 += {vectors * lanes}u) {{
    """,
    )
    assert body.count(f"float{lanes} c") == rows * vectors
    assert body.count("= fma(") == rows * vectors


ARGMIN_COLUMNS_16x16 = """
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %c = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    %rr = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
    %c16 = arith.constant dense<16> : tensor<16x1xi32>
    %rs = arith.muli %rr, %c16 : tensor<16x1xi32>
    %rb = tt.broadcast %rs : tensor<16x1xi32> -> tensor<16x16xi32>
    %cb = tt.broadcast %c : tensor<1x16xi32> -> tensor<16x16xi32>
    %off = arith.addi %rb, %cb : tensor<16x16xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
    %q = tt.addptr %p, %off : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
    %v = tt.load %q : tensor<16x16x!tt.ptr<f32>>
    %z:2 = "tt.reduce"(%v, %rb) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %ai: i32, %b: f32, %bi: i32):
      %lt = arith.cmpf olt, %a, %b : f32
      %m = arith.select %lt, %a, %b : f32
      %mi = arith.select %lt, %ai, %bi : i32
      tt.reduce.return %m, %mi : f32, i32
    }) : (tensor<16x16xf32>, tensor<16x16xi32>) -> (tensor<16xf32>, tensor<16xi32>)
    %pi = tt.bitcast %x : !tt.ptr<f32> -> !tt.ptr<i32>
    %ps = tt.splat %pi : !tt.ptr<i32> -> tensor<16x!tt.ptr<i32>>
    %pq = tt.addptr %ps, %r : tensor<16x!tt.ptr<i32>>, tensor<16xi32>
    tt.store %pq, %z#1 : tensor<16x!tt.ptr<i32>>
"""


def test_scratch_is_a_union_with_a_member_per_element_type():
    """Values of two types share the scratch area through the members of one union, never through casts of its
    bytes (undefined behaviour that PoCL's LLVM acted on once one work-item made the barriers no-ops)."""
    for local_size in (1, 128):
        src = render(ARGMIN_COLUMNS_16x16, local_size=local_size)
        check_lines(
            src,
            """
            union tb_scratch { float tb_float[512]; int tb_int[512]; };
            __local union tb_scratch tb_smem_area __attribute__((aligned(16)));
            __local union tb_scratch *tb_smem = &tb_smem_area;
            tb_smem->tb_float[
            tb_smem->tb_int[
            """,
        )
        assert "(tb_smem +" not in src and "uchar tb_smem" not in src
