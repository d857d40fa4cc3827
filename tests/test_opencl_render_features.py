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
