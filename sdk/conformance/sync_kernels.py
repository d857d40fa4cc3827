"""Kernels that check inter-program synchronization on a device: one definition, used by the regression tests and
the device-tool probes (tools/gpu/)."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def locked_increment(counters, lock, BLOCK: tl.constexpr, LOCK_TYPE: tl.constexpr, SEM: tl.constexpr):
    """Every program takes the spin lock `lock` (compare-and-swap 0 → 1 until it succeeds), adds one to
    `counters[:BLOCK]` with plain loads and stores, waits at a barrier, and frees the lock with an exchange.

    After `P` programs every counter is `P` only if the lock orders the programs' plain memory accesses: a fence
    that is work-group scope where device scope is needed loses increments (NVIDIA OpenCL's mem_fence did)."""
    free = tl.cast(0, LOCK_TYPE)
    taken = tl.cast(1, LOCK_TYPE)
    offs = tl.arange(0, BLOCK)
    while tl.atomic_cas(lock, free, taken, SEM) != free:
        pass
    tl.store(counters + offs, tl.load(counters + offs) + 1.0)
    tl.debug_barrier()
    tl.atomic_xchg(lock, free)
