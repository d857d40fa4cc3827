"""The lock-and-count kernel (triton_backend_sdk.conformance.sync_kernels, the pattern of upstream test_atomic_cas), rendered by the opencl backend, then rebuilt with other
fence spellings and run straight through pyopencl on the selected device: counts per spelling, and each variant's
device binary (PTX on NVIDIA) written to OUT, to see what a fence compiles to (tools/gpu/probe_opencl_h200.sh)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pyopencl as cl
import torch
import triton.language as tl

OUT = os.environ.get("OUT", ".")
N = 2000

#: every fence spelling the backend renders (render/language.py), replaced by each variant's own
RENDERED = (
    'asm volatile("fence.acq_rel.gpu;" ::: "memory"); ',
    'asm volatile("membar.gl;" ::: "memory"); ',
    "mem_fence(CLK_GLOBAL_MEM_FENCE); ",
)
FULL_BARRIER = "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"
DEVICE_FENCE = 'asm volatile("fence.acq_rel.gpu;" ::: "memory"); '
#: variant -> (fence around the atomics, fence before tl.debug_barrier's barrier)
VARIANTS = {
    "as_rendered": None,
    "portable_mem_fence": ("mem_fence(CLK_GLOBAL_MEM_FENCE); ", ""),
    "fence_acq_rel_gpu": (DEVICE_FENCE, DEVICE_FENCE),
    "membar_gl": ('asm volatile("membar.gl;" ::: "memory"); ',) * 2,
    "atomics_only": (DEVICE_FENCE, ""),
    "barrier_only": ("", DEVICE_FENCE),
    "no_fence": ("", ""),
}


def variant(src: str, spec: tuple[str, str] | None) -> str:
    if spec is None:
        return src
    lines = []
    for line in src.splitlines():
        if line.strip() in (f.strip() for f in RENDERED):  # the fence before the debug barrier: a line of its own
            continue
        for f in RENDERED:
            line = line.replace(f, "@F@ ").replace(f.strip(), "@F@")
        lines.append(line.replace("@F@ ", spec[0]).replace("@F@", spec[0].strip()))
    text = "\n".join(lines)
    return text.replace(FULL_BARRIER, spec[1] + FULL_BARRIER)


def main() -> None:
    import triton_backend_sdk
    from triton_backend_sdk.conformance.sync_kernels import locked_increment

    triton_backend_sdk.use("opencl")
    rows = []
    for sem in (None, "relaxed"):
        lock = torch.zeros((1,), dtype=torch.int32)
        data = torch.zeros((128,), dtype=torch.float32)
        h = locked_increment[(N,)](data, lock, BLOCK=128, LOCK_TYPE=tl.int32, SEM=sem)
        src = h.asm["cl"]
        rows.append(f"backend sem={sem}: min {data.min().item():.0f} max {data.max().item():.0f} of {N}")
        name = "tb_" + h.name
        local = int(h.metadata.opencl_local_size)
        dev = [d for p in cl.get_platforms() for d in p.get_devices() if "NVIDIA" in p.name.upper()]
        dev = dev[0] if dev else cl.get_platforms()[0].get_devices()[0]
        ctx = cl.Context([dev])
        q = cl.CommandQueue(ctx)
        for vname, subs in VARIANTS.items():
            text = variant(src, subs)
            tag = f"{vname}_{sem}"
            try:
                prg = cl.Program(ctx, text).build()
            except cl.Error as e:  # a spelling the compiler rejects: record it, keep going
                rows.append(f"{tag}: build failed: {str(e)[:300]}")
                continue
            with open(f"{OUT}/cas_{tag}.ptx", "wb") as f:
                f.write(prg.binaries[0])
            counts = []
            for _ in range(3):
                d = np.zeros(128, np.float32)
                lk = np.zeros(1, np.int32)
                bd = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=d)
                bl = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=lk)
                k = cl.Kernel(prg, name)
                k.set_args(bd, np.uint64(0), bl, np.uint64(0))
                cl.enqueue_nd_range_kernel(q, k, (N * local,), (local,)).wait()
                cl.enqueue_copy(q, d, bd).wait()
                counts.append(f"{d.min():.0f}..{d.max():.0f}")
            rows.append(f"{tag}: {' '.join(counts)} of {N}")
            with open(f"{OUT}/cas_{tag}.cl", "w") as f:
                f.write(text)
    print("\n".join(rows))
    with open(f"{OUT}/cas_variants.txt", "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    sys.exit(main())
