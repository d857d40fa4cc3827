"""Golden OpenCL C for the features beyond OpenCL C 1.2's built-ins: erfinv, 8/16-bit atomics (a compare-and-swap
loop on the aligned 32-bit word), device_print (printf) and device_assert (a hidden error buffer), fnuz fp8.

Same helpers as tests/test_opencl_render.py: TTIR in, expected lines of OpenCL C out, in order; no device needed.
"""

from __future__ import annotations

from test_opencl_render import check_lines, render


def test_erfinv_is_a_helper_per_width():
    src = render(
        """
    %v = tt.load %x : !tt.ptr<f32>
    %e = tt.extern_elementwise %v {libname = "", libpath = "", pure = true, symbol = "__nv_erfinvf"} : (f32) -> f32
    %d = tt.load %y : !tt.ptr<f64>
    %f = tt.extern_elementwise %d {libname = "", libpath = "", pure = true, symbol = "__nv_erfinv"} : (f64) -> f64
""",
        args="%x: !tt.ptr<f32>, %y: !tt.ptr<f64>",
    )
    check_lines(
        src,
        """
        float tb_erfinv_f32(float y) {
        double tb_erfinv_f64(double y) {
        double a = fabs(y), x = (double)tb_erfinv_f32(fmin((float)a, 0.99999994f));
        float v_e0 = tb_erfinv_f32(v_v0);
        double v_f0 = tb_erfinv_f64(v_d0);
    """,
    )


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
        uint sh = (uint)((ulong)p & 3ul) * 8u;
        uint m = 65535u << sh, prev, old = *w;
        float o = tb_h2f((ushort)((prev & m) >> sh));
        old = atomic_cmpxchg(w, prev, (prev & ~m) | (((uint)tb_f2h(o + v)) << sh));
        return tb_h2f((ushort)((old & m) >> sh));
        if (lid == 0u) { mem_fence(CLK_GLOBAL_MEM_FENCE); ((__local float *)(tb_smem + 0))[0] = tb_atomic_fadd_f16(
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
