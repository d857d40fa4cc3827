"""Which stores may bypass the caches (non-temporal stores): large tiles a program writes and the kernel never reads.

An ordinary store first reads the line it writes (read-for-ownership), so a kernel streaming a large output moves
three bytes for every two it needs; a non-temporal store writes the line whole. Measured on cpu_ref (2 cores, a
4096x4096 fp32 softmax, one 16 KiB row per program): 8.4 -> 6.5-6.9 ms, 0.98x -> 1.31x torch (opencl on PoCL's
x86 device writes the same stores with clang's builtin: backends/opencl/render/streaming.py). The price: the
stored lines leave the caches, so a consumer that would have found them there reads memory instead, and a store
that some later read of the same launch needs is slower. Hence only:

- tiles of at least STREAM_BYTES per store (a softmax or layer-norm row of 4096 floats), or smaller tiles in a launch
  that writes at least LAUNCH_STREAM_BYTES through the store (tested when the kernel runs: a vector add's 1024-float
  blocks of a 2^24-float output stream, those of a 1 MiB output, which a consumer in a fused graph reads back while
  cached, do not; measured on cpu_ref, an add feeding another add: streaming 1.3x slower at 1 MiB outputs, even at
  4 and 16 MiB, 1.45x faster at 64 MiB);
- through pointers whose function arguments no load of the kernel reads (no in-place update, no scratch re-read);
- in kernels whose programs do not talk through memory (no atomics, barriers or custom ops with effects): a
  non-temporal store is weakly ordered, and only the fence a backend places after its last program orders it;
- in the kernel function only, and only where no other function of the module touches memory (a callee's pointer
  arguments are not the kernel's, so the two cannot be compared).
"""

from __future__ import annotations

from ..custom_ops import CustomOp
from ..ir import ops as O
from ..ir.core import Op
from ..transforms.bounds_check import pointer_roots
from .axis_info import pointee_bytes

#: a store of at least this many bytes per program streams
STREAM_BYTES = 16 * 1024
#: a smaller store streams in a launch that writes at least this many bytes through it
LAUNCH_STREAM_BYTES = 32 << 20

_TALKS = (O.AtomicRMW, O.AtomicCAS, O.AtomicLoad, O.AtomicStore, O.AtomicPoll, O.Barrier)


def streaming_stores(func: O.Func, others: list[O.Func] | tuple[O.Func, ...] = ()) -> frozenset[Op]:
    """The `tt.store` ops of kernel `func` a backend may emit as non-temporal stores, `others` being the module's
    other functions (module docstring)."""
    return frozenset(s for s in _eligible(func, others) if _bytes(s) >= STREAM_BYTES)


def launch_streaming_stores(func: O.Func, others: list[O.Func] | tuple[O.Func, ...] = ()) -> frozenset[Op]:
    """The `tt.store` ops of `func` whose tiles are below STREAM_BYTES but that may stream in a launch that writes
    at least LAUNCH_STREAM_BYTES through them (programs × tile bytes, known when the kernel runs): an output that
    large leaves the caches before a consumer can read it back, whatever the tile a program writes. Measured on
    cpu_ref (2 cores, 2^24-float vector add in 1024-float blocks): 4.5 -> 3.1 ms, 0.96x -> 1.4x torch."""
    return frozenset(s for s in _eligible(func, others) if _bytes(s) < STREAM_BYTES)


def streaming_programs(store: O.Store) -> int:
    """The fewest programs of a launch that write LAUNCH_STREAM_BYTES through `store` (one of
    `launch_streaming_stores`): the grid size from which its backend emits the non-temporal path."""
    return -(-LAUNCH_STREAM_BYTES // _bytes(store))


def _eligible(func: O.Func, others: list[O.Func] | tuple[O.Func, ...]) -> list[Op]:
    """Tensor stores of `func` that meet every condition of the module docstring but the tile size."""
    ops = list(func.walk())
    if any(isinstance(op, _TALKS) or (isinstance(op, CustomOp) and not op.pure) for op in ops):
        return []
    if any(isinstance(op, (*_TALKS, O.Load, O.Store, CustomOp)) for g in others for op in g.walk()):
        return []
    stores = [op for op in ops if isinstance(op, O.Store) and op.ptr.type.is_tensor]
    if not stores:
        return []
    roots = pointer_roots(func)
    read = frozenset().union(*(roots.get(op.ptr, frozenset({-1})) for op in ops if isinstance(op, O.Load)))
    return [s for s in stores if (r := roots.get(s.ptr, frozenset({-1}))) and -1 not in r and not (r & read)]


def _bytes(store: O.Store) -> int:
    return store.ptr.type.numel * pointee_bytes(store.ptr.type)
