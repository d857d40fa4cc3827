"""The opencl launcher: Triton's launcher call → pyopencl kernel arguments, one NDRange, results back in the torch
tensors before it returns.

Work per launch is kept small: argument converters are built once per compiled kernel, buffers over tensor memory
(zero-copy devices) or pooled device buffers (discrete devices) are reused, and only the pointers the kernel may
write through are copied back.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from triton_backend_sdk.launch import expand_descriptors, flatten_descriptors, signature_of

from .asserts import check as check_asserts
from .asserts import error_buffer, flush_prints
from .clock import cycle_scale
from .runtime import LoadedKernel, runtime_for

_KERNELS: dict[int, LoadedKernel] = {}


def register(kernel: LoadedKernel) -> int:
    key = id(kernel)
    _KERNELS[key] = kernel
    return key


def unregister(key: int) -> None:
    _KERNELS.pop(key, None)


def _wrap_int(bits: int, dtype: Any, unsigned: bool = False) -> Callable[[Any], Any]:
    """An integer argument: an int (or anything with __index__) in the range of the Triton type, else TypeError
    (a float is never truncated silently), stored as the same bits in the signed numpy type."""
    mask, sign = (1 << bits) - 1, 1 << (bits - 1)
    lo, hi = (0, (1 << bits) - 1) if unsigned else (-sign, sign - 1)

    def conv(v: Any) -> Any:
        if isinstance(v, float) or not hasattr(v, "__index__"):
            raise TypeError(
                f"expected an integer for a {'u' if unsigned else 'i'}{bits} argument, got {type(v).__name__} {v!r}"
            )
        x = operator.index(v)
        if not lo <= x <= hi:
            raise TypeError(f"{x} is out of range for a {'u' if unsigned else 'i'}{bits} argument [{lo}, {hi}]")
        x &= mask
        return dtype(x - (1 << bits) if x & sign else x)

    return conv


def _param_dtype(ir_dtype: str, sig_type: str) -> str:
    """The dtype a scalar argument is checked against: the Triton signature's where it is the unsigned type of the
    IR's (signless) integer width, else the IR's. Triton types an int argument in [2**63, 2**64) `u64`, and its
    TTIR parameter is a signless i64: checking the value against i64's range refused 2**64 - 1 (upstream
    test_value_specialization_overflow); it is passed as the same 64 bits, as the native launcher passes a u64."""
    if ir_dtype[:1] == "i" and sig_type[:1] == "u" and sig_type[1:] == ir_dtype[1:] and ir_dtype != "i1":
        return sig_type
    return ir_dtype


def _round16(kind: str) -> Callable[[Any], Any]:
    import torch

    dt = torch.float16 if kind == "fp16" else torch.bfloat16
    return lambda v: np.float32(torch.tensor(float(v), dtype=torch.float32).to(dt).item())


def _scalar_converter(np_dtype: str, triton_dtype: str) -> Callable[[Any], Any]:
    if triton_dtype in ("fp16", "bf16"):
        return _round16(triton_dtype)
    if np_dtype == "float32":
        return np.float32
    if np_dtype == "float64":
        return np.float64
    if triton_dtype in ("i1", "u1"):
        return lambda v: np.int8(1 if v else 0)
    bits = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}[np_dtype]
    return _wrap_int(bits, getattr(np, np_dtype), unsigned=triton_dtype.startswith("u"))


def _memory(arg: Any, name: str) -> tuple[int, int, int]:
    """(storage base address, storage bytes, byte offset of the pointer) of a CPU tensor argument."""
    t = arg
    if not hasattr(t, "untyped_storage") and hasattr(t, "base") and hasattr(t.base, "untyped_storage"):
        t = t.base  # triton.reinterpret(...) wrappers
    if not hasattr(t, "untyped_storage"):
        raise TypeError(
            f"opencl: argument {name!r} must be a torch CPU tensor (got {type(arg).__name__}); raw "
            f"addresses cannot be given to an OpenCL device"
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
        self.convert = [
            None if p[0] == "ptr" else _scalar_converter(p[1], _param_dtype(p[2], t)) for p, t in zip(params, sig)
        ]
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
        if enter_hook is not None:
            enter_hook(launch_metadata)
        if self.descriptors:
            args = flatten_descriptors(args, self.descriptors)
        if gx * gy * gz > 0:
            self.launch(_KERNELS[function], (gx, gy, gz), args)
        if exit_hook is not None:
            exit_hook(launch_metadata)

    def launch(self, lk: LoadedKernel, grid: tuple[int, int, int], args: tuple) -> None:
        import pyopencl as cl

        rt = runtime_for(lk.device)
        values: list[Any] = []
        mems: list[tuple[int, int, bool]] = []
        for j, i in enumerate(self.runtime_args):
            a = args[i]
            conv = self.convert[j]
            if conv is None:
                base, nbytes, off = _memory(a, self.names[j])
                mems.append((base, nbytes, j in self.written))
                values.append(None)
                values.append(np.uint64(off))
            else:
                try:
                    values.append(conv(a))
                except TypeError as e:
                    raise TypeError(f"opencl: argument {self.names[j]!r} (#{i}): {e}") from None
        gsize = (grid[0] * self.local, grid[1], grid[2])
        scale = cycle_scale(rt) if self.clock_scale else None  # measured on first use, under rt.lock
        with lk.lock, rt.lock:
            if rt.zero_copy:
                bufs = [rt.host_buffer(b, max(n, 16)) if n else rt.host_buffer(_dummy(), 16) for b, n, _ in mems]
            else:
                bufs = self._copy_in(rt, mems)
            it = iter(bufs)
            final = [next(it) if v is None else v for v in values]
            if self.global_scratch:
                final.append(rt.scratch(self.kernel_name, grid[0] * grid[1] * grid[2], self.global_scratch))
            if self.asserts:
                final.append(error_buffer(rt))
            if scale is not None:
                final.append(scale)
            lk.kernel.set_args(*final)
            evt = cl.enqueue_nd_range_kernel(rt.queue, lk.kernel, gsize, (self.local, 1, 1))
            rt.last_event = evt
            if rt.zero_copy:
                evt.wait()
            else:
                self._copy_out(rt, mems, bufs)
            if self.prints:
                flush_prints()
            if self.asserts:
                check_asserts(rt, self.kernel_name, self.asserts)

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
