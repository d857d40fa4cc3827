"""The target language as data: what differs between C dialects is spelled here, not in the rules.

`CStyleLanguage` names the constructs the shared C-like rules need (qualifiers, work-item ids, barriers, half
loads/stores, extension pragmas); `OpenCLLanguage` fills them in for OpenCL C 1.2. Another C dialect (a vendor's
OpenCL-like language, say) is a small subclass that overrides attributes, and the rule table stays the same.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CStyleLanguage:
    kernel_prefix: str = ""
    #: prefix of the device entry point's name: Triton's kernel names are the user's (`kernel`, `sin`, `main`,
    #: `double`, ...) and may be keywords or built-ins of the device language, so the entry never uses one as is
    entry_prefix: str = "tb_"
    global_qual: str = ""
    local_qual: str = ""
    constant_qual: str = "const"
    #: a barrier that also orders the group's local-memory accesses
    barrier: str = ""
    #: a barrier that also orders global memory (`tl.debug_barrier`)
    full_barrier: str = ""
    #: a fence around atomics with acquire/release semantics
    global_fence: str = ""
    local_id: str = ""
    group_id: str = ""  # format with {axis}
    num_groups: str = ""  # format with {axis}
    #: f16 in memory: load to float / store from float (round to nearest even)
    half_load: str = ""  # format with {ptr}
    half_store: str = ""  # format with {value}, {ptr}
    unroll_pragma: str = ""
    #: attribute fixing the work-group size, format with {size}
    fixed_group_size: str = ""
    fp64_pragma: str = ""
    int64_atomics_pragma: str = ""
    fp_contract_off: str = ""


@dataclass(frozen=True)
class OpenCLLanguage(CStyleLanguage):
    kernel_prefix: str = "__kernel "
    global_qual: str = "__global "
    local_qual: str = "__local "
    constant_qual: str = "__constant"
    barrier: str = "barrier(CLK_LOCAL_MEM_FENCE);"
    full_barrier: str = "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"
    global_fence: str = "mem_fence(CLK_GLOBAL_MEM_FENCE);"
    local_id: str = "(uint)get_local_id(0)"
    group_id: str = "(int)get_group_id({axis})"
    num_groups: str = "(int)get_num_groups({axis})"
    half_load: str = "vload_half(0, (const __global half *)({ptr}))"
    half_store: str = "vstore_half_rte({value}, 0, (__global half *)({ptr}))"
    unroll_pragma: str = "#pragma unroll"
    fixed_group_size: str = "__attribute__((reqd_work_group_size({size}, 1, 1)))"
    fp64_pragma: str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable"
    int64_atomics_pragma: str = (
        "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
        "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable"
    )
    fp_contract_off: str = "#pragma OPENCL FP_CONTRACT OFF"


OPENCL = OpenCLLanguage()
