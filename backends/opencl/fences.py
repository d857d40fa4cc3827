"""Which device-scope fence a device has (descriptor features, read by render/language.py's `device_fence`).

OpenCL 1.2's `mem_fence(CLK_GLOBAL_MEM_FENCE)` orders a work-item's accesses as its work-group sees them; NVIDIA's
OpenCL compiles it to `membar.cta`. A lock taken and released by work-groups on different SMs then reads stale L1
lines (upstream test_atomic_cas counted 19-48 of 2000 on an H200). NVIDIA's compiler takes inline PTX, whose
`fence.acq_rel.gpu` (sm_70 and later; `membar.gl` before) orders memory for the whole device (2000 of 2000).
"""

from __future__ import annotations

from typing import Any

from .render.language import FENCE_PTX_ACQ_REL, FENCE_PTX_MEMBAR_GL

#: cl_nv_device_attribute_query's CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
_CC_MAJOR_NV = 0x4000


def fence_features(dev: Any) -> set[str]:
    """The device-scope fence feature of OpenCL device `dev`, or none (the portable mem_fence is then used)."""
    if "NVIDIA" not in dev.platform.name.upper():
        return set()
    import pyopencl

    try:
        major = int(dev.get_info(_CC_MAJOR_NV))
    except pyopencl.Error:  # no cl_nv_device_attribute_query: the fence every NVIDIA GPU has
        major = 0
    return {FENCE_PTX_ACQ_REL if major >= 7 else FENCE_PTX_MEMBAR_GL}


__all__ = ["fence_features"]
