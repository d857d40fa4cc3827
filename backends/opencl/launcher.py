"""The opencl launcher: Triton's launcher call → pyopencl kernel arguments, one NDRange, results back in the torch
tensors before it returns.

Work per launch is kept small: argument converters are built once per compiled kernel, buffers over tensor memory
(zero-copy devices) or pooled device buffers (discrete devices) are reused, and only the pointers the kernel may
write through are copied back.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
from triton_backend_sdk.bounds import BOUNDS_PARAM, BOUNDS_TYPE, bounds_table, checked_args
from triton_backend_sdk.launch import expand_descriptors, flatten_descriptors, make_native_launcher, signature_of

from . import launch_chunks as chunks
from .asserts import check as check_asserts
from .asserts import error_buffer, flush_prints
from .clock import cycle_scale
from .runtime import DeviceError, LoadedKernel, runtime_for

#: the loaded kernels by the `function` handle Triton passes to the launcher. Weak: an entry lives as long as the
#: CompiledKernel holding its module. Triton's `CompiledKernel.__del__` unloads through whichever driver is active
#: by then, so an explicit unregister missed every opencl kernel freed while cpu_ref was active, and each kept its
#: built program (~0.7 MB) for the life of the process.
_KERNELS: weakref.WeakValueDictionary[int, LoadedKernel] = weakref.WeakValueDictionary()


def register(kernel: LoadedKernel) -> int:
    key = id(kernel)
    _KERNELS[key] = kernel
    return key


#: bits of each scalar signature type the contract packs at its own width
_KIND_BITS = {"i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64, "u64": 64}
_KIND_BITS |= {"fp32": 32, "f32": 32, "fp64": 64}


def _scalar_decoder(kind: str, np_dtype: str) -> Callable[[bytes, int], Any]:
    """Reads one runtime argument's value from the contract's 8-byte slot (`Launcher.pack`) as the numpy value of
    its OpenCL C parameter: integers as the same bits at the parameter's width (a u64 2**64 - 1 is the i64 -1),
    fp16/bf16 (already rounded by the contract) widened exactly to float, i1 as a byte."""
    if kind in ("fp16", "bf16"):
        if kind == "fp16":
            return lambda slots, off: np.float32(np.frombuffer(slots, np.float16, 1, off)[0])
        return lambda slots, off: (np.frombuffer(slots, np.uint16, 1, off).astype(np.uint32) << 16).view(np.float32)[0]
    dt = np.dtype(np_dtype)
    if kind not in ("i1", "u1") and dt.itemsize * 8 != _KIND_BITS[kind]:
        raise TypeError(f"opencl: a {kind} argument cannot be passed as an OpenCL C {np_dtype} parameter")
    return lambda slots, off: np.frombuffer(slots, dt, 1, off)[0]


def _memory(arg: Any, name: str) -> tuple[int, int, int]:
    """(storage base address, storage bytes, byte offset of the pointer) of a CPU tensor argument."""
    t = arg
    if not hasattr(t, "untyped_storage") and hasattr(t, "base") and hasattr(t.base, "untyped_storage"):
        t = t.base  # triton.reinterpret(...) wrappers
    if not hasattr(t, "untyped_storage") or not hasattr(t, "device"):
        # a typed pointer (FlagGems' TypedPtr: data_ptr() and dtype, no device, no storage size) says where its
        # memory starts but not where it ends, and an OpenCL buffer needs both
        raise TypeError(
            f"opencl: argument {name!r} must be a torch CPU tensor (got {type(arg).__name__}, which gives an "
            f"address but no device or storage size); raw addresses cannot be given to an OpenCL device"
        )
    if t.device.type != "cpu":
        raise TypeError(
            f"opencl: argument {name!r} is on device '{t.device}'; pass CPU tensors (the backend moves "
            f"them to the OpenCL device)"
        )
    st = t.untyped_storage()
    base = st.data_ptr()
    return base, st.nbytes(), arg.data_ptr() - base


class Launcher:
    def __init__(self, src: Any, metadata: Any) -> None:
        names, types = signature_of(src)
        self.descriptors: set[int] = set()
        if any(t.startswith("tensordesc") for t in types):
            names, types, self.descriptors = expand_descriptors(names, types)
        #: a bounds-checked kernel takes its bounds table after its arguments (sdk/bounds.py)
        self.bounds = checked_args(metadata)
        self.kernel_runtime_args = [i for i, t in enumerate(types) if t != "constexpr"]
        if self.bounds is not None:
            names, types = [*names, BOUNDS_PARAM], [*types, BOUNDS_TYPE]
        self.runtime_args = [i for i, t in enumerate(types) if t != "constexpr"]
        self.names = [names[i] for i in self.runtime_args]
        params = [list(p) for p in metadata.opencl_params]
        if len(params) != len(self.runtime_args):
            raise TypeError(
                f"opencl: kernel {metadata.name!r} takes {len(params)} runtime arguments but its "
                f"signature has {len(self.runtime_args)}"
            )
        self.kinds = [p[0] for p in params]
        sig = [types[i] for i in self.runtime_args]
        #: the SDK's launch contract (grid, argument count, scalar ranges from the signature, tensor dtypes)
        self.contract = make_native_launcher(names, types, "opencl")
        self.contract_types = types
        self.decode = [None if p[0] == "ptr" else _scalar_decoder(t, p[1]) for p, t in zip(params, sig)]
        self.written = set(metadata.opencl_written)
        self.local = int(metadata.opencl_local_size)
        #: bytes of global scratch per program (its scratch area does not fit the device's local memory): the kernel
        #: takes a buffer of grid × this many bytes after its own parameters (render/program.py GLOBAL_SCRATCH)
        self.global_scratch = int(getattr(metadata, "global_scratch_size", 0) or 0)
        #: [message, location] per tt.assert: the kernel then takes the error buffer last (asserts.py)
        self.asserts = [list(a) for a in getattr(metadata, "opencl_asserts", None) or []]
        self.kernel_name = metadata.name
        self.prints = bool(getattr(metadata, "opencl_prints", False))
        #: the kernel reads a cycle counter: it takes the counter's scale last (render/clock.py)
        self.clock_scale = bool(getattr(metadata, "opencl_clock_scale", False))
        #: the launch may run in pieces (launch_chunks.py): the kernel takes the grid's size after all the above
        self.chunked = bool(getattr(metadata, "opencl_chunked", False))
        #: measured over this kernel's launches: how long the next one will take, to size its pieces
        self.seconds_per_program: float | None = None

    def __call__(
        self,
        gx: int,
        gy: int,
        gz: int,
        stream: Any,
        function: int,
        packed_metadata: Any,
        launch_metadata: Any,
        enter_hook: Any,
        exit_hook: Any,
        *args: Any,
    ) -> None:
        if self.descriptors:
            args = flatten_descriptors(args, self.descriptors)
        if self.bounds is not None and len(args) == len(self.contract_types) - 1:
            table = bounds_table([args[i] for i in self.kernel_runtime_args], self.bounds, self.kernel_name)
            args = (*args, table)
        # checked before the enter hook, as the native launcher does: a refused launch is not reported as run
        gx, gy, gz, slots = self.contract.pack(gx, gy, gz, stream, function, None, None, None, None, *args)
        if enter_hook is not None:
            enter_hook(launch_metadata)
        if gx * gy * gz > 0:
            self.launch(_KERNELS[function], (gx, gy, gz), args, slots)
        if exit_hook is not None:
            exit_hook(launch_metadata)

    def launch(self, lk: LoadedKernel, grid: tuple[int, int, int], args: tuple, slots: bytes) -> None:
        rt = runtime_for(lk.device)
        values: list[Any] = []
        mems: list[tuple[int, int, bool]] = []
        for j, i in enumerate(self.runtime_args):
            decode = self.decode[j]
            if decode is None:
                base, nbytes, off = _memory(args[i], self.names[j])
                if rt.zero_copy:  # the buffer starts at the device's base alignment, the kernel adds the rest
                    shift = base % rt.host_align
                    base, nbytes, off = base - shift, nbytes + shift, off + shift
                mems.append((base, nbytes, j in self.written))
                values.append(None)
                values.append(np.uint64(off))
            else:
                values.append(decode(slots, 8 * j))
        scale = cycle_scale(rt) if self.clock_scale else None  # measured on first use, under rt.lock
        total = grid[0] * grid[1] * grid[2]
        with lk.lock, rt.lock:
            if rt.zero_copy:
                bufs = [rt.host_buffer(b, max(n, 16)) if n else rt.host_buffer(_dummy(), 16) for b, n, _ in mems]
            else:
                bufs = self._copy_in(rt, mems)
            it = iter(bufs)
            final = [next(it) if v is None else v for v in values]
            if self.global_scratch:
                final.append(rt.scratch(self.kernel_name, total, self.global_scratch))
            if self.asserts:
                final.append(error_buffer(rt))
            if scale is not None:
                final.append(scale)
            if self.chunked:
                final += [np.int32(n) for n in grid]
            lk.set_args(final)
            start = time.perf_counter()
            try:
                last = self._enqueue(rt, lk, grid, total)
                if rt.zero_copy:
                    last.wait()
            except BaseException as e:  # KeyboardInterrupt between pieces, or an enqueue refused: let enqueued work end
                rt.queue.finish()
                if not rt.zero_copy:
                    self._copy_out(rt, mems, bufs)
                if self.asserts:  # an assert of the programs that ran is not reported against the next launch
                    with contextlib.suppress(AssertionError):
                        check_asserts(rt, self.kernel_name, self.asserts)
                if type(e).__module__.startswith("pyopencl"):
                    raise self._refused(rt, e) from e
                raise
            rt.last_event = last
            rt.last_launch = (lk.kernel, final, (grid[0] * self.local, grid[1], grid[2]), (self.local, 1, 1))
            if not rt.zero_copy:
                self._copy_out(rt, mems, bufs)
            if self.chunked:
                self.seconds_per_program = chunks.measured(self.seconds_per_program, time.perf_counter() - start, total)
            if self.prints:
                flush_prints()
            if self.asserts:
                check_asserts(rt, self.kernel_name, self.asserts)

    def _refused(self, rt: Any, e: BaseException) -> DeviceError:
        """The device's refusal of a launch, named: NVIDIA's OpenCL answers OUT_OF_HOST_MEMORY or OUT_OF_RESOURCES
        where a program's private arrays (its register tiles at few work-items) exceed what it can give them."""
        return DeviceError(
            f"[opencl] {rt.device.name.strip()!r} refused to launch kernel {self.kernel_name!r} at {self.local} "
            f"work-item(s) per program: {e}. Each work-item holds its share of the program's tiles in private "
            "memory: launch with more work-items per program (num_warps, or work_items=) or with smaller blocks"
        )

    def _enqueue(self, rt: Any, lk: LoadedKernel, grid: tuple[int, int, int], total: int) -> Any:
        """Enqueue the grid, in one piece or in several (launch_chunks.py; waiting for each but the last, so that
        Ctrl-C is seen between them); returns the last piece's event."""
        import pyopencl as cl

        local = (self.local, 1, 1)
        per_piece = chunks.piece_programs(total, self.seconds_per_program) if self.chunked else None
        if per_piece is None:
            return cl.enqueue_nd_range_kernel(rt.queue, lk.kernel, (grid[0] * self.local, grid[1], grid[2]), local)
        pending: deque[Any] = deque()
        for (x, y, z), (nx, ny, nz) in chunks.boxes(grid, per_piece):
            size, offset = (nx * self.local, ny, nz), (x * self.local, y, z)
            pending.append(cl.enqueue_nd_range_kernel(rt.queue, lk.kernel, size, local, global_work_offset=offset))
            if len(pending) == 2:
                pending.popleft().wait()
        return pending[-1]

    @staticmethod
    def _copy_in(rt: Any, mems: list[tuple[int, int, bool]]) -> list[Any]:
        import pyopencl as cl

        by_base: dict[int, Any] = {}
        out = []
        for base, nbytes, _ in mems:
            buf = by_base.get(base)
            if buf is None:
                buf = by_base[base] = rt.acquire(max(nbytes, 16))
                if nbytes:
                    cl.enqueue_copy(rt.queue, buf, _view(base, nbytes), is_blocking=False)
            out.append(buf)
        return out

    @staticmethod
    def _copy_out(rt: Any, mems: list[tuple[int, int, bool]], bufs: list[Any]) -> None:
        import pyopencl as cl

        done: set[int] = set()
        for (base, nbytes, written), buf in zip(mems, bufs):
            if written and nbytes and base not in done:
                done.add(base)
                cl.enqueue_copy(rt.queue, _view(base, nbytes), buf, is_blocking=False)
        rt.queue.finish()
        released: set[int] = set()
        for buf in bufs:
            if id(buf) not in released:
                released.add(id(buf))
                rt.release(buf)


def _view(base: int, nbytes: int) -> Any:
    import ctypes

    return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(base))


_DUMMY: list[Any] = []


def _dummy() -> int:
    if not _DUMMY:
        _DUMMY.append(np.zeros(16, dtype=np.uint8))
    return _DUMMY[0].ctypes.data
