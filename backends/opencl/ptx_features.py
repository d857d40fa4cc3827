"""Which of NVIDIA's inline-PTX warp shuffles and fast math a device takes (descriptor features, read by
render/warp_reduce.py and render/vmath.py through the language's `warp_shuffle` / `approx_exp2`).

NVIDIA's OpenCL is 1.2 without subgroup functions, so a reduction's partials otherwise meet in local memory behind
barriers; its compiler takes inline PTX, as CUDA C does. `shfl.sync` (sm_70 and later: every lane of the warp names
itself in the member mask, which is what Volta's independent thread scheduling requires) is offered where the device
reports compute capability 7 or more and 32-lane warps through cl_nv_device_attribute_query; `ex2.approx.ftz.f32`
(every NVIDIA GPU) is what Triton's CUDA path computes `tl.exp` on fp32 with. Other devices get neither and render
as before.
"""

from __future__ import annotations

from typing import Any

from .render.language import EXP2_PTX_APPROX, WARP_SHFL_PTX

#: cl_nv_device_attribute_query's CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV and CL_DEVICE_WARP_SIZE_NV
_CC_MAJOR_NV = 0x4000
_WARP_SIZE_NV = 0x4003


def ptx_features(dev: Any) -> set[str]:
    """The inline-PTX warp shuffle and approximate exp2 features of OpenCL device `dev` (NVIDIA only)."""
    if "NVIDIA" not in dev.platform.name.upper():
        return set()
    import pyopencl

    feats = {EXP2_PTX_APPROX}
    try:
        major, warp = int(dev.get_info(_CC_MAJOR_NV)), int(dev.get_info(_WARP_SIZE_NV))
    except pyopencl.Error:  # no cl_nv_device_attribute_query: the lane layout is not known, no shuffles
        return feats
    if major >= 7 and warp == 32:
        feats.add(WARP_SHFL_PTX)
    return feats


__all__ = ["ptx_features"]
