"""Golden OpenCL C for the features beyond OpenCL C 1.2's built-ins: 8/16-bit atomics (a compare-and-swap
loop on the aligned 32-bit word), device_print (printf) and device_assert (a hidden error buffer), fnuz fp8.

Same helpers as tests/test_opencl_render.py: TTIR in, expected lines of OpenCL C out, in order; no device needed.
"""

from __future__ import annotations

from golden_ir import check_lines
from test_opencl_render import render


def test_half_atomic_add_is_a_cas_loop_on_the_containing_word():
    src = render(
        """
    %c = arith.constant 1.000000e+00 : f16
    %o = tt.atomic_rmw fadd, acq_rel, gpu, %x, %c : (!tt.ptr<f16>, f16) -> f16
""",
        args="%x: !tt.ptr<f16>",
    )
    check_lines(
        src,
        """
        ushort tb_f2h(float f) {
        float tb_h2f(ushort h) {
        float tb_atomic_fadd_f16(volatile __global ushort *p, float v) {
        volatile __global uint *w = (volatile __global uint *)((ulong)p & ~(ulong)3);
        uint at = (uint)((ulong)p & 3ul), sh = (as_uchar4(1u).s0 == 1 ? at : 2u - at) * 8u;
        uint m = 65535u << sh, prev, old = *w;
        float o = tb_h2f((ushort)((prev & m) >> sh));
        old = atomic_cmpxchg(w, prev, (prev & ~m) | (((uint)tb_f2h(o + v)) << sh));
        return tb_h2f((ushort)((old & m) >> sh));
        if (lid == 0u) { mem_fence(CLK_GLOBAL_MEM_FENCE); tb_smem->tb_float[0] = tb_atomic_fadd_f16(
    """,
    )


def test_byte_atomics_and_16bit_compare_and_swap():
    src = render(
        """
    %c = arith.constant 3 : i8
    %o = tt.atomic_rmw umax, relaxed, gpu, %x, %c : (!tt.ptr<i8>, i8) -> i8
    %z = arith.constant 0.000000e+00 : bf16
    %p = tt.atomic_cas relaxed, gpu, %y, %z, %z : (!tt.ptr<bf16>, bf16, bf16) -> bf16
""",
        args="%x: !tt.ptr<i8>, %y: !tt.ptr<bf16>",
    )
    check_lines(
        src,
        """
        char tb_atomic_umax_i8(volatile __global char *p, char v) {
        uint m = 255u << sh, prev, old = *w;
        char o = ((char)(uchar)((prev & m) >> sh));
        old = atomic_cmpxchg(w, prev, (prev & ~m) | (((uint)(uchar)((char)max((uchar)o, (uchar)v))) << sh));
        float tb_atomic_cas_bf16(volatile __global ushort *p, float c, float v) {
        uint cb = (as_uint(tb_rnd_bf(c)) >> 16) << sh, vb = (as_uint(tb_rnd_bf(v)) >> 16) << sh;
        if ((prev & m) != cb) break;
        = tb_atomic_umax_i8(a_x0, v_c0); }
        = tb_atomic_cas_bf16(a_y0, 0.0f, 0.0f);
    """,
    )


def test_device_print_goes_through_local_memory_and_work_item_0():
    src = render(
        """
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    tt.print " r: " {hex = false, isSigned = array<i32: 1>} : %r : tensor<256xi32>
    tt.print " n: " {hex = true, isSigned = array<i32: 1>} : %n : i32
"""
    )
    check_lines(
        src,
        """
        barrier(CLK_LOCAL_MEM_FENCE);
        tb_smem->tb_int[i0] = ((int)i0);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0u) for (uint p0 = 0u; p0 < 256u; ++p0)
        printf("pid (%d, %d, %d) idx (%u) r: %d\\n", tb_pid0, tb_pid1, tb_pid2, p0, (int)(tb_smem->tb_int[p0]));
        if (lid == 0u) printf("pid (%d, %d, %d) idx () n: 0x%08x\\n", tb_pid0, tb_pid1, tb_pid2, (uint)(uint)(a_n0));
    """,
    )


def test_device_assert_records_in_the_hidden_error_buffer_and_stops_the_program():
    src = render(
        """
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %s = tt.splat %n : i32 -> tensor<256xi32>
    %c = arith.cmpi slt, %r, %s : tensor<256xi32>
    tt.assert %c, "r < n" : tensor<256xi1>
    %z = arith.constant 0 : i32
    %p = arith.cmpi sgt, %n, %z : i32
    tt.assert %p, "n > 0" : i1
"""
    )
    check_lines(
        src,
        """
        __kernel void tb_k(__global float *a_x0_base, ulong a_x0_off, int a_n0, volatile __global int *tb_err, int tb_grid0, int tb_grid1, int tb_grid2) {
        bool ok0 = true;
        if (!((((int)i0) < a_n0))) ok0 = false;
        if (!ok0) { if (atomic_cmpxchg(tb_err, 0, 1) == 0) { tb_err[1] = 0; tb_err[2] = tb_pid0; tb_err[3] = tb_pid1; tb_err[4] = tb_pid2; } }
        if (!ok0) tb_smem->tb_int[0] = 1;
        if (tb_smem->tb_int[0]) return;
        if (!(v_p0)) { if (lid == 0u) { if (atomic_cmpxchg(tb_err, 0, 1) == 0) { tb_err[1] = 1;
    """,
    )


def test_fnuz_fp8_saturates_and_has_one_nan():
    src = render(
        """
    %v = tt.load %x : !tt.ptr<f64>
    %y = tt.fp_to_fp %v, rounding = rtne : f64 -> f8E4M3FNUZ
    tt.store %x2, %y : !tt.ptr<f8E4M3FNUZ>
    %w = tt.load %x3 : !tt.ptr<f8E5M2FNUZ>
    %z = tt.fp_to_fp %w : f8E5M2FNUZ -> f32
""",
        args="%x: !tt.ptr<f64>, %x2: !tt.ptr<f8E4M3FNUZ>, %x3: !tt.ptr<f8E5M2FNUZ>",
    )
    check_lines(
        src,
        """
        float tb_d2f_odd(double d) {
        uchar tb_e4m3b8nz_enc(float f) {
        = (t0 > 0x43700000u);
        = (t1 ? 0x43700000u : t0);
        > 0x0u);
        = (t0 > 0x7f800000u);
        ? 0x80u :
        float tb_e5m2b16nz_dec(uchar b) {
        = (c == 0x80u);
        ? 0x7fc00000u :
        __kernel void tb_k(__global double *a_x0_base, ulong a_x0_off, __global uchar *a_x2_0_base, ulong a_x2_0_off,
        float v_y0 = tb_e4m3b8nz_dec(tb_e4m3b8nz_enc(tb_d2f_odd(v_v0)));
        float v_w0 = tb_e5m2b16nz_dec(*(a_x3_0));
    """,
    )


def test_fp8_round_toward_zero_truncates_and_saturates():
    src = render(
        """
    %v = tt.load %x : !tt.ptr<f32>
    %y = tt.fp_to_fp %v, rounding = rtz : f32 -> f8E5M2
""",
        args="%x: !tt.ptr<f32>",
    )
    check_lines(
        src,
        """
        uchar tb_e5m2_enc_rtz(float f) {
        = (t0 > 0x47600000u);
        = (t1 ? 0x47600000u : t0);
        = (t5 >> t10);
        = (t3 - 0x71u);
        float v_y0 = tb_e5m2_dec(tb_e5m2_enc_rtz(v_v0));
    """,
    )
