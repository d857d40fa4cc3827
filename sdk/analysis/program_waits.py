"""Whether a kernel's programs may wait for one another.

A launcher may run a grid in pieces, one after another (the opencl launcher does, so that Ctrl-C stops a long launch
between its pieces). That is only sound for programs that never wait for a program of a later piece: such a wait
would never end. A program can only wait by polling memory another program writes, which takes a loop (or
`tt.atomic_poll`, itself a loop) around an atomic or a volatile load, so a module with no polling construct cannot.
The answer is conservative: any such access anywhere in a module with any loop counts, in whichever function.
"""

from __future__ import annotations

from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Module, Op

#: accesses whose value another program's write may change while this one runs (so a loop can wait on them)
_SHARED_STATE = (O.AtomicRMW, O.AtomicCAS, O.AtomicLoad, O.AtomicStore)


def _loops(op: Op) -> bool:
    """A loop: scf's, or a function body of several blocks (branches back to a block, after a cf lowering)."""
    return isinstance(op, (O.For, O.While)) or (isinstance(op, O.Func) and len(op.regions[0].blocks) > 1)


def programs_may_wait_for_each_other(module: Module) -> bool:
    loops = shared = False
    for op in module.walk():
        if isinstance(op, O.AtomicPoll):
            return True
        loops = loops or _loops(op)
        shared = shared or isinstance(op, _SHARED_STATE) or (isinstance(op, O.Load) and op.is_volatile)
        if loops and shared:
            return True
    return False
