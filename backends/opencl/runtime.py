"""pyopencl runtime: device discovery and selection, descriptors, program build/load, memory for torch tensors.

Imported only when a device is needed (never while `import triton` runs). Device selection, in order:
`TRITON_OPENCL_DEVICE` (`P:D` platform/device indices as in PYOPENCL_CTX, a single device index across all
platforms, or a case-insensitive substring of "platform device"), then `PYOPENCL_CTX`, then the first GPU, then the
first device.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

from triton_backend_sdk.descriptor import ALL_DTYPES, TargetDescriptor
from triton_backend_sdk.errors import SDKError, ToolError
from triton_backend_sdk.signals import kept_signal_handlers

from .clock import clock_features
from .compiler import CPU_FEATURE
from .fences import fence_features
from .ptx_features import ptx_features
from .x86_features import x86_features

NAME = "opencl"
BUILD_OPTIONS = ("-cl-std=CL1.2",)
CONTAINER_MAGIC = b"TBSCLBIN1\n"


class DeviceError(SDKError, RuntimeError):
    """No usable OpenCL device (pyopencl missing, no ICD, no matching device), or one that refuses a launch."""


def cl() -> Any:
    try:
        import pyopencl
    except ImportError as e:
        raise DeviceError(
            "the opencl backend needs pyopencl: pip install 'triton-backend-sdk[opencl]' and an "
            "OpenCL driver (e.g. apt-get install pocl-opencl-icd)"
        ) from e
    return pyopencl


@functools.cache
def all_devices() -> tuple[Any, ...]:
    """Every device of every platform. Enumerating starts each driver, and PoCL's LLVM then takes over most signal
    handlers (sdk/signals.py): the process's own are put back."""
    with kept_signal_handlers():
        pyopencl = cl()
        refuse_pocl_after_triton_plugins()
        try:
            platforms = pyopencl.get_platforms()
        except pyopencl.LogicError as e:  # no ICD installed
            raise DeviceError(f"no OpenCL platform found ({e}); install an OpenCL driver (e.g. pocl-opencl-icd)") from e
        return tuple(d for p in platforms for d in p.get_devices())


def _label(dev: Any) -> str:
    return f"{dev.platform.name} {dev.name}".strip()


def _pick(spec: str, devices: tuple[Any, ...]) -> Any:
    if re.fullmatch(r"\d+:\d+", spec):
        pi, di = (int(x) for x in spec.split(":"))
        platforms = cl().get_platforms()
        if pi >= len(platforms) or di >= len(platforms[pi].get_devices()):
            raise DeviceError(f"no OpenCL device {spec!r}; {listing()}")
        return platforms[pi].get_devices()[di]
    if re.fullmatch(r"\d+", spec):
        if int(spec) >= len(devices):
            raise DeviceError(f"no OpenCL device {spec!r}; {listing()}")
        return devices[int(spec)]
    for d in devices:
        if spec.lower() in _label(d).lower():
            return d
    raise DeviceError(f"no OpenCL device matches {spec!r}; {listing()}")


def device_lines() -> list[str]:
    sel = selected_device()
    return [
        f"[{i}] {_label(d)} | {d.opencl_c_version.strip()} | warp={_warp_size(d)} local={d.local_mem_size}"
        f"{'  <- selected' if d == sel else ''}"
        for i, d in enumerate(all_devices())
    ]


def listing() -> str:
    return "devices: " + "; ".join(f"{i}: {_label(d)}" for i, d in enumerate(all_devices()))


@functools.cache
def selected_device() -> Any:
    devices = all_devices()
    if not devices:
        raise DeviceError("no OpenCL device found")
    for var in ("TRITON_OPENCL_DEVICE", "PYOPENCL_CTX"):
        spec = os.environ.get(var, "").strip()
        if spec:
            return _pick(spec, devices)
    gpus = [d for d in devices if d.type & cl().device_type.GPU]
    return (gpus or list(devices))[0]


def arch_of(dev: Any) -> str:
    """The device's identity in Triton's cache key and `GPUTarget.arch`: model, platform and driver version."""
    return f"{dev.name.strip()} | {dev.platform.name.strip()} | {dev.driver_version.strip()}"


def device_for_arch(arch: str | None) -> Any:
    if arch is None:
        return selected_device()
    sel = selected_device()
    if arch_of(sel) == arch:
        return sel
    for d in all_devices():
        if arch_of(d) == arch:
            return d
    raise DeviceError(
        f"no OpenCL device with arch {arch!r} on this machine (OpenCL compiles for a present device); {listing()}"
    )


def _warp_size(dev: Any) -> int:
    """The subgroup width the execution model assumes: NVIDIA's warp, AMD's wavefront, 1 on a CPU device (one
    work-item per program), else 32."""
    pyopencl = cl()
    if dev.type & pyopencl.device_type.CPU:
        return 1
    if "cl_nv_device_attribute_query" in dev.extensions:
        try:
            return int(dev.get_info(0x4003))  # CL_DEVICE_WARP_SIZE_NV
        except pyopencl.Error:
            return 32
    if dev.type & pyopencl.device_type.GPU and "AMD" in dev.vendor.upper():
        return 64
    return 32


def features_of(dev: Any) -> tuple[str, ...]:
    pyopencl = cl()
    feats = set(dev.extensions.split())
    if dev.host_unified_memory:
        feats.add("host_unified_memory")
    if dev.type & pyopencl.device_type.CPU:
        feats.add(CPU_FEATURE)  # one work-item per program (compiler.local_size)
    if dev.single_fp_config & pyopencl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT:
        feats.add("correctly_rounded_divide_sqrt")
    feats |= clock_features(dev, bool(dev.type & pyopencl.device_type.CPU), is_pocl(dev))  # timed atomic_poll
    feats |= fence_features(dev)  # device-scope acquire/release on NVIDIA (fences.py)
    feats |= ptx_features(dev)  # warp shuffles and tl.exp's ex2.approx on NVIDIA (ptx_features.py)
    feats |= x86_features(dev, bool(dev.type & pyopencl.device_type.CPU), is_pocl(dev))  # PoCL's clang on x86
    return tuple(sorted(feats))


#: lower the device's local memory (bytes) / work-group size in its descriptor, to test on a device whose own limits
#: are larger what the backend does at a smaller device's (scratch in global memory, fewer work-items); read once
LIMIT_LOCAL_MEM_ENV = "TRITON_OPENCL_LIMIT_LOCAL_MEM"
LIMIT_WORK_GROUP_ENV = "TRITON_OPENCL_LIMIT_WORK_GROUP"


def _lowered(var: str, value: int) -> int:
    env = os.environ.get(var, "").strip()
    if not env:
        return int(value)
    if not env.isdigit() or int(env) < 1:
        raise DeviceError(f"{var}={env!r} is not a positive integer")
    return min(int(value), int(env))


@functools.cache
def describe(arch: str | None = None) -> TargetDescriptor:
    dev = device_for_arch(arch)
    feats = features_of(dev)
    dtypes = set(ALL_DTYPES)  # every fp8 format too: the renderer emulates each in integer ops
    if "cl_khr_fp64" not in feats:
        dtypes.discard("fp64")
    local_mem = _lowered(LIMIT_LOCAL_MEM_ENV, dev.local_mem_size)
    return TargetDescriptor(
        name=NAME,
        arch=arch_of(dev),
        warp_size=_warp_size(dev),
        max_threads_per_program=_lowered(LIMIT_WORK_GROUP_ENV, dev.max_work_group_size),
        shared_memory_bytes=local_mem,
        local_memory_bytes=local_mem,
        vector_width_bits=max(128, 32 * dev.preferred_vector_width_float),
        num_compute_units=dev.max_compute_units,
        supported_dtypes=frozenset(dtypes),
        features=feats,
    )


# ---- programs ------------------------------------------------------------------------------------------------------


def build_options(features: tuple[str, ...] | frozenset[str]) -> list[str]:
    opts = list(BUILD_OPTIONS)
    if "correctly_rounded_divide_sqrt" in features:
        opts.append("-cl-fp32-correctly-rounded-divide-sqrt")  # IEEE division and sqrt, as torch computes them
    return opts


def source_excerpt(source: str, log: str, context: int = 4) -> str:
    """The generated source around each line the compiler log complains about, with line numbers."""
    lines = source.splitlines()
    # PoCL: "error: /tmp/x.cl:3:14: msg"; NVIDIA: "<kernel>:3:14: error: msg"
    wanted = sorted(
        {
            int(m.group(1))
            for line in log.splitlines()
            if "error" in line.lower()
            for m in [re.search(r":(\d+):\d+:", line)]
            if m
        }
    )[:3]
    out = []
    for n in wanted:
        lo, hi = max(1, n - context), min(len(lines), n + context)
        out.append("\n".join(f"{'>>' if i == n else '  '} {i:5d} | {lines[i - 1]}" for i in range(lo, hi + 1)))
    return "\n  ...\n".join(out)


def _triton_plugin_libraries() -> list[str]:
    """Triton C++ plugin libraries this process has loaded (through the SDK or TRITON_PLUGIN_PATHS)."""
    mod = sys.modules.get("triton_backend_sdk.plugins")
    libs = list(getattr(mod, "_TRITON_LIBS", {}) or {})
    env = [p for p in os.environ.get("TRITON_PLUGIN_PATHS", "").split(os.pathsep) if p]
    return libs + [p for p in env if p not in libs]


def _mapped_files() -> set[str]:
    try:
        with open("/proc/self/maps") as f:
            return {line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6}
    except OSError:
        return set()


def pocl_icds() -> list[str]:
    """The OpenCL ICD files (OCL_ICD_VENDORS, else /etc/OpenCL/vendors) that name PoCL's library."""
    where = os.environ.get("OCL_ICD_VENDORS", "/etc/OpenCL/vendors")
    files = (
        [where]
        if os.path.isfile(where)
        else [os.path.join(where, f) for f in sorted(os.listdir(where))]
        if os.path.isdir(where)
        else []
    )
    out = []
    for path in files:
        try:
            with open(path) as f:
                if "pocl" in f.read().lower():
                    out.append(path)
        except OSError:
            continue
    return out


def refuse_pocl_after_triton_plugins() -> None:
    """Starting PoCL in a process that has already mapped a Triton C++ plugin library aborts it (`LLVM ERROR: Option
    'default' already exists!`: the plugin's LLVM, in the global symbol scope, meets PoCL's registering its options);
    the other order works. So before the ICD loader starts the drivers: refuse, naming the libraries, where PoCL is
    installed, not yet loaded, and a plugin library is."""
    mapped = _mapped_files()
    loaded = [p for p in _triton_plugin_libraries() if os.path.realpath(p) in mapped]
    if not loaded or any("libpocl" in os.path.basename(m) for m in mapped):
        return
    icds = pocl_icds()
    if icds:
        raise DeviceError(
            f"[opencl] this process loaded Triton C++ plugin libraries ({', '.join(loaded)}) before starting OpenCL; "
            f"starting PoCL ({icds[0]}) now would abort the process (its LLVM and the plugin's clash). Use opencl "
            f"first (triton_backend_sdk.use('opencl') or `triton-sdk devices` before the plugin loads), or run the "
            f"plugin in another process"
        )


def is_pocl(dev: Any) -> bool:
    """PoCL needs two workarounds: its LLVM clashes with Triton's plugin libraries, and its program binaries are
    not safe to keep (see `build_container`)."""
    return "Portable Computing Language" in dev.platform.name


def built(program: Any, **options: Any) -> Any:
    """`program.build(**options)` with the process's signal handlers kept: a build may be the first to start the
    driver's compiler, whose LLVM takes them over (sdk/signals.py)."""
    with kept_signal_handlers():
        return program.build(**options)


def build_program(dev: Any, source: str, name: str, options: list[str]) -> Any:
    pyopencl = cl()
    libs = _triton_plugin_libraries()
    if libs and is_pocl(dev):
        raise ToolError(
            f"[opencl] cannot build kernel {name!r} with PoCL in a process that loaded Triton C++ plugin "
            f"libraries ({', '.join(libs)}): Triton loads them into the global symbol scope, where their "
            f"LLVM replaces PoCL's own (PoCL then aborts or hangs). Run the plugin in another process."
        )
    rt = runtime_for(dev)
    prg = pyopencl.Program(rt.context, source)
    try:
        built(prg, options=options, devices=[dev])
    except pyopencl.Error as e:
        log = _build_log(prg, dev) or str(e)
        excerpt = source_excerpt(source, log)
        raise ToolError(
            f"[opencl] the OpenCL compiler of {_label(dev)!r} rejected kernel {name!r} "
            f"(options {' '.join(options)}):\n{log.strip()}\n--- generated source around the error ---\n"
            f"{excerpt or '(no line numbers in the log)'}\n  repro: set TRITON_SDK_DUMP_DIR=<dir> and "
            f"rerun; the OpenCL C is <dir>/{name}/*.cl"
        ) from None
    return prg


#: programs built at compile time, by (device, source, options): `make_cl` builds a kernel to ask its work-group size
#: and `make_clbin` then packs the same build (a few recent ones are kept; one compile is in flight per thread)
_RECENT_BUILDS: dict[tuple[int, str, tuple[str, ...]], Any] = {}
_RECENT_LOCK = threading.Lock()
_RECENT_MAX = 8


def _build_for_compile(dev: Any, source: str, name: str, options: list[str]) -> Any:
    key = (dev.int_ptr, hashlib.sha256(source.encode()).hexdigest(), tuple(options))
    with _RECENT_LOCK:
        prg = _RECENT_BUILDS.get(key)
    if prg is None:
        prg = build_program(dev, source, name, options)
        with _RECENT_LOCK:
            _RECENT_BUILDS[key] = prg
            while len(_RECENT_BUILDS) > _RECENT_MAX:
                _RECENT_BUILDS.pop(next(iter(_RECENT_BUILDS)))
    return prg


def kernel_work_group_size(arch: str, source: str, name: str, entry: str) -> int:
    """The most work-items per work-group the device of `arch` runs kernel `entry` of `source` with
    (CL_KERNEL_WORK_GROUP_SIZE): known only after a build, since it depends on the kernel's register use."""
    pyopencl = cl()
    dev = device_for_arch(arch)
    prg = _build_for_compile(dev, source, name, build_options(features_of(dev)))
    kernel = pyopencl.Kernel(prg, entry)
    return int(kernel.get_work_group_info(pyopencl.kernel_work_group_info.WORK_GROUP_SIZE, dev))


def first_launch_crash(arch: str, kernel: Any, name: str) -> str | None:
    """How the device's compiler died at the first launch of rendered kernel `kernel`, tried in a probe process
    (probe.py); None if it survived. Only PoCL compiles at the first launch, so other devices are not probed."""
    dev = device_for_arch(arch)
    if not is_pocl(dev):
        return None
    from .probe import first_launch_crash as probe
    from .probe import probe_job

    options = build_options(features_of(dev))
    _build_for_compile(dev, kernel.source, name, options)  # a compile error is named here, not in the probe
    return probe(probe_job(dev, options, kernel))


def _build_log(prg: Any, dev: Any) -> str:
    try:
        return prg.get_build_info(dev, cl().program_build_info.LOG)
    except Exception:  # noqa: BLE001
        return ""


def build_container(arch: str, source: str, name: str, local_size: int, entry: str) -> bytes:
    """Compile `source` (entry point `entry`, kernel `name`) for the device of `arch`; the container holds the device
    binary and, to rebuild from when a driver no longer accepts that binary, the source and options.

    PoCL's binary is a serialization of its own kernel-cache directory: when two processes build the same source
    at once (pytest -n 2, two users), a binary can come out without its kernel metadata, and loading it aborts the
    process inside PoCL (`pocl_binary_get_kernels_metadata: Assertion 'len > 0'`, reproduced with two concurrent op
    suite runs). So for PoCL the container keeps the source only: loading rebuilds it, which PoCL's own kernel cache
    answers in milliseconds."""
    dev = device_for_arch(arch)
    options = build_options(features_of(dev))
    prg = _build_for_compile(dev, source, name, options)
    # PoCL's binaries are never asked for: reading them segfaults PoCL for some programs (FlagGems' sort kernel)
    binary = b"" if is_pocl(dev) else (prg.binaries[0] if prg.binaries else b"")
    header = json.dumps(
        {
            "name": name,
            "entry": entry,
            "arch": arch,
            "options": options,
            "local_size": local_size,
            "binary": len(binary),
            "source": len(source.encode()),
        }
    ).encode()
    return CONTAINER_MAGIC + len(header).to_bytes(4, "little") + header + binary + source.encode()


def parse_container(blob: bytes) -> tuple[dict, bytes, str]:
    if not blob.startswith(CONTAINER_MAGIC):
        raise ToolError("[opencl] not an opencl kernel binary (bad magic)")
    pos = len(CONTAINER_MAGIC)
    n = int.from_bytes(blob[pos : pos + 4], "little")
    header = json.loads(blob[pos + 4 : pos + 4 + n])
    pos += 4 + n
    binary = blob[pos : pos + header["binary"]]
    source = blob[pos + header["binary"] :].decode()
    return header, binary, source


@dataclass
class LoadedKernel:
    program: Any
    kernel: Any
    name: str
    device: Any
    lock: threading.Lock
    max_group_size: int
    local_size: int
    #: the by-value arguments last set on `kernel`, by position: PoCL 3.1 takes ~7 us per by-value clSetKernelArg
    #: (0.1 us per buffer), 80 of a tiny launch's ~250 us, so a relaunch sets again only the scalars that changed
    scalars: dict[int, Any] = field(default_factory=dict)

    def set_args(self, values: list[Any]) -> None:
        """Sets `values` as the kernel's arguments (call under `lock`): buffers every time, a numpy scalar only
        where the one set last at its position differs in type or bits (so -0.0 after 0.0, or a NaN, is set)."""
        import numpy as np

        for i, v in enumerate(values):
            if isinstance(v, np.generic):
                old = self.scalars.get(i)
                if old is not None and type(old) is type(v) and old.tobytes() == v.tobytes():
                    continue
                self.scalars[i] = v
            else:
                self.scalars.pop(i, None)
            self.kernel.set_arg(i, v)


def load_kernel(blob: bytes) -> LoadedKernel:
    """A runnable kernel from a container: the device binary if the driver takes it, else a rebuild from source."""
    pyopencl = cl()
    header, binary, source = parse_container(blob)
    local_size = int(header["local_size"])
    dev = selected_device()
    rt = runtime_for(dev)
    key = hashlib.sha256(blob).hexdigest()
    cached = rt.programs.get(key)
    if cached is None:
        prg = None
        if binary and header.get("arch") == arch_of(dev):
            try:
                prg = built(pyopencl.Program(rt.context, [dev], [binary]), options=header["options"])
            except pyopencl.Error:
                prg = None
        if prg is None:
            prg = build_program(dev, source, header["name"], build_options(features_of(dev)))
        cached = rt.programs[key] = prg
    kernel = pyopencl.Kernel(cached, header["entry"])
    wg = kernel.get_work_group_info(pyopencl.kernel_work_group_info.WORK_GROUP_SIZE, dev)
    if local_size > wg:
        raise ToolError(
            f"[opencl] kernel {header['name']!r} needs work-groups of {local_size} work-items but "
            f"{_label(dev)!r} can run it with at most {wg}: it was compiled for another device or driver, "
            f"whose limit the compile adapted to (metadata opencl_adapted); compile it for this one"
        )
    return LoadedKernel(cached, kernel, header["name"], dev, threading.Lock(), wg, local_size)


# ---- per-device state: context, queue, memory --------------------------------------------------------------------


#: zero-copy buffers kept for reuse (a relaunch on the same tensors skips clCreateBuffer). Few: each one keeps the
#: device's small allocations for it alive, and over tensors that came and went (Inductor allocates every output
#: afresh) they fragmented the heap around the freed tensors, so that each new 16 MiB output came from fresh pages:
#: with 256 kept, a vector add into a fresh output faulted 4,097 pages per call (4.3 ms against 1.2 reused) and the
#: heap grew 16 MiB per call; with 8, 0-490 faults (2.0 ms), a flat heap, and 1000 launches on the same tensors as
#: fast (154 against 158 us per launch). Inductor's RMS-norm kernel: 4,014 faults and 4.7 ms per call -> 0 and 3.3.
HOST_BUFFER_CACHE = 8


class DeviceRuntime:
    """Context and queue of one device, its loaded programs, and how torch CPU memory reaches it.

    Zero-copy (a buffer over the tensor's own memory, `CL_MEM_USE_HOST_PTR`) is used when a probe shows the device
    reads and writes host memory in place (PoCL's CPU device); otherwise tensors are copied into pooled device
    buffers before a launch and the written ones copied back after it.
    """

    def __init__(self, dev: Any) -> None:
        pyopencl = cl()
        self.device = dev
        self.context = pyopencl.Context([dev])
        self.queue = pyopencl.CommandQueue(
            self.context, dev, properties=pyopencl.command_queue_properties.PROFILING_ENABLE
        )
        #: the last kernel launch's event (device timing for benchmarks: `event.profile.end - .start` in ns)
        self.last_event: Any = None
        #: the last launch as `rerun_last` repeats it: (kernel, its arguments, global size, local size)
        self.last_launch: tuple[Any, list[Any], tuple[int, int, int], tuple[int, int, int]] | None = None
        self._flush: Any = None
        #: built programs by container digest, while a loaded kernel holds one (weak: a process that compiles
        #: thousands of kernels, as the op suite does, keeps only the live ones)
        self.programs: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
        self.zero_copy = bool(dev.host_unified_memory) and self._probe_zero_copy()
        #: bytes a zero-copy buffer's host address must be aligned to (CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bits): PoCL
        #: does not use less aligned host memory in place (torch aligns to 64 bytes, PoCL asks 128): the first launch
        #: on such a 16 MiB buffer took 1.2-104 ms against 0.7-0.9 aligned, later ones 1.0-1.7 against 0.7
        self.host_align = max(1, int(dev.mem_base_addr_align) // 8)
        self._host_buffers: dict[tuple[int, int], Any] = {}
        self._pool: dict[int, list[Any]] = {}
        #: the global scratch of kernels whose scratch exceeds local memory (`scratch`), grown as needed, reused
        self._scratch: Any = None
        self.lock = threading.Lock()

    def _probe_zero_copy(self) -> bool:
        """Whether a USE_HOST_PTR buffer aliases host memory in both directions, also after later host writes."""
        import numpy as np

        pyopencl = cl()
        try:
            host = np.arange(64, dtype=np.int32)
            mf = pyopencl.mem_flags
            buf = pyopencl.Buffer(self.context, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=host)
            prg = pyopencl.Program(self.context, "__kernel void k(__global int *p) { p[get_global_id(0)] += 1; }")
            built(prg)
            knl = pyopencl.Kernel(prg, "k")
            knl.set_args(buf)
            host[:] = 100  # written after the buffer was made: the device must see it
            pyopencl.enqueue_nd_range_kernel(self.queue, knl, (64,), None).wait()
            self.queue.finish()
            return bool((host == 101).all())
        except pyopencl.Error:
            return False

    # zero-copy -----------------------------------------------------------------------------------------------------
    def host_buffer(self, base: int, nbytes: int) -> Any:
        key = (base, nbytes)
        buf = self._host_buffers.get(key)
        if buf is None:
            import ctypes

            pyopencl = cl()
            mem = (ctypes.c_char * nbytes).from_address(base)
            mf = pyopencl.mem_flags
            buf = pyopencl.Buffer(self.context, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=mem)
            if len(self._host_buffers) >= HOST_BUFFER_CACHE:
                self._host_buffers.pop(next(iter(self._host_buffers)))
            self._host_buffers[key] = buf
        return buf

    # copy mode -----------------------------------------------------------------------------------------------------
    def acquire(self, nbytes: int) -> Any:
        size = max(256, 1 << (nbytes - 1).bit_length())
        free = self._pool.get(size)
        if free:
            return free.pop()
        return cl().Buffer(self.context, cl().mem_flags.READ_WRITE, size)

    def release(self, buf: Any) -> None:
        self._pool.setdefault(buf.size, []).append(buf)

    # benchmarks ----------------------------------------------------------------------------------------------------
    def rerun_last(self, reps: int, flush_bytes: int = 0) -> list[int]:
        """Device nanoseconds of `reps` more runs of the last launch on the device buffers it used, in one piece each.

        For benchmarks: on a device without shared memory a launch copies its tensors in and out around the kernel,
        and the kernel timed there runs on a GPU that idled through the copies (its time moved by up to 30 % between
        runs where Triton-CUDA's, launched back to back, held within 1 %). A re-run times the kernel as back-to-back
        launches are timed. `flush_bytes`: a device buffer of that size is zero-filled before each run, as
        `triton.testing.do_bench` clears the L2 cache before each of its runs. The kernel writes its outputs again
        (into the copy buffers, or the tensors themselves on a zero-copy device): time kernels whose outputs are
        not also their inputs."""
        if self.last_launch is None:
            raise ToolError("[opencl] rerun_last: no kernel was launched on this device yet")
        import numpy as np

        pyopencl = cl()
        kernel, args, size, local = self.last_launch
        with self.lock:
            if flush_bytes and (self._flush is None or self._flush.size < flush_bytes):
                self._flush = None
                self._flush = pyopencl.Buffer(self.context, pyopencl.mem_flags.READ_WRITE, flush_bytes)
            kernel.set_args(*args)
            times = []
            for _ in range(reps):
                if flush_bytes:
                    pyopencl.enqueue_fill_buffer(self.queue, self._flush, np.uint8(0), 0, flush_bytes)
                ev = pyopencl.enqueue_nd_range_kernel(self.queue, kernel, size, local)
                ev.wait()
                times.append(ev.profile.end - ev.profile.start)
            return times

    # global scratch ------------------------------------------------------------------------------------------------
    def scratch(self, kernel: str, programs: int, per_program: int) -> Any:
        """A device buffer of `programs` × `per_program` bytes: one region per program of a kernel whose scratch
        area is in global memory (metadata `global_scratch_size`). One buffer per device, grown to the largest
        launch so far and reused: launches hold the runtime's lock and run in order on its queue, and every
        program writes its region before reading it."""
        nbytes = programs * per_program
        limit = int(self.device.max_mem_alloc_size)
        if nbytes > limit:
            raise ToolError(
                f"[opencl] kernel {kernel!r} keeps its scratch area in global memory ({per_program} bytes per "
                f"program; the device's local memory is too small) and a grid of {programs} programs needs "
                f"{nbytes} bytes of it; {_label(self.device)!r} allocates at most {limit} bytes in one buffer "
                f"(CL_DEVICE_MAX_MEM_ALLOC_SIZE): launch fewer programs or use smaller blocks"
            )
        if self._scratch is None or self._scratch.size < nbytes:
            size = min(limit, max(1 << 16, 1 << (nbytes - 1).bit_length()))
            self._scratch = None  # released before the larger one is made
            self._scratch = cl().Buffer(self.context, cl().mem_flags.READ_WRITE, size)
        return self._scratch


_RUNTIMES: dict[int, DeviceRuntime] = {}
_RT_LOCK = threading.Lock()


def runtime_for(dev: Any) -> DeviceRuntime:
    key = dev.int_ptr
    rt = _RUNTIMES.get(key)
    if rt is None:
        with _RT_LOCK:
            rt = _RUNTIMES.get(key)
            if rt is None:
                rt = _RUNTIMES[key] = DeviceRuntime(dev)
    return rt
