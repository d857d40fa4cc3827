"""`SDKDriver`: Triton's `DriverBase` for host-driven SDK backends (a CPU, or a device reached through a host API).

It answers everything `kernel[grid]`, `triton.testing.do_bench` and `triton.autotune` ask of the active driver.
Activation rule: an SDK driver is never active where a non-SDK Triton driver (CUDA, HIP, ...) is active, unless
`TRITON_DEFAULT_BACKEND` names it; so installing the SDK never changes what stock Triton picks on a GPU machine.
This class stays abstract: Triton takes the single concrete `DriverBase` subclass in a backend's `driver` module.
"""

from __future__ import annotations

import abc
import functools
import os
import time
from typing import TYPE_CHECKING, Any, ClassVar

from triton.backends.driver import DriverBase

from .errors import ToolError

if TYPE_CHECKING:
    from .descriptor import TargetDescriptor


def activate(drv: Any) -> Any:
    """Make `drv` Triton's active driver. Triton caches compiled kernels per device index, not per driver, so on a
    change of driver the @triton.jit functions forget theirs (the next launch rebinds; disk cache hits stay cheap):
    otherwise a kernel compiled for one backend would be launched by another."""
    from triton.runtime import driver

    if type(driver.active) is not type(drv):
        from .plugins import drop_jit_caches

        drop_jit_caches()
    driver.set_active(drv)
    return drv


def selected_backend() -> str | None:
    return os.environ.get("TRITON_DEFAULT_BACKEND") or None


def non_sdk_driver_active() -> bool:
    """True if a Triton driver that is not an SDK driver (CUDA, HIP, another vendor's) reports itself active."""
    from triton.backends import backends

    for backend in backends.values():
        drv = backend.driver
        if isinstance(drv, type) and issubclass(drv, SDKDriver):
            continue
        if _safely_active(drv):
            return True
    return False


def _safely_active(drv: type) -> bool:
    """A broken third-party driver must not take the SDK down with it: an error counts as inactive."""
    try:
        return bool(drv.is_active())
    except Exception:  # noqa: BLE001
        return False


class HostEvent:
    """A timing event for `triton.testing.do_bench`: SDK launches are synchronous, so host time is kernel time."""

    def __init__(self, enable_timing: bool = True) -> None:
        self.t: float | None = None

    def record(self, stream: Any = None) -> None:
        self.t = time.perf_counter()

    def elapsed_time(self, end: HostEvent) -> float:
        if self.t is None or end.t is None:
            raise RuntimeError("elapsed_time on an event that was not recorded")
        return (end.t - self.t) * 1000.0

    def synchronize(self) -> None:
        pass


class HostDeviceInterface:
    """The subset of `torch.cuda` that Triton's benchmarking uses, for synchronous host-driven backends."""

    Event = HostEvent

    @staticmethod
    def synchronize(device: Any = None) -> None:
        pass

    @staticmethod
    def current_device() -> int:
        return 0

    @staticmethod
    def device_count() -> int:
        return 1

    @staticmethod
    def is_available() -> bool:
        return True


class BinaryModule:
    """A loaded kernel binary: keeps whatever owns the code alive while Triton holds the function address."""

    def __init__(self, owner: Any, function: int) -> None:
        self.owner = owner
        self.function = function


class SDKUtils:
    """`driver.utils`: what `CompiledKernel` calls to load binaries and query the device."""

    def __init__(self, driver: SDKDriver) -> None:
        self._driver = driver

    def load_binary(self, name: str, kernel: bytes, shared: int, device: int) -> tuple[Any, int, int, int, int]:
        """The bytes are checked against the digest in the kernel's metadata first (sdk/integrity.py): a cache entry
        whose binary was edited, truncated or swapped is recompiled, never loaded."""
        from .integrity import checked_binary

        name, kernel = checked_binary(name, kernel, self._driver.backend_name)
        module = self._driver.load_binary(name, kernel, device)
        d = self._driver.descriptor()
        return module, module.function, 0, 0, d.max_threads_per_program

    def unload_module(self, module: Any) -> None:
        self._driver.unload_binary(module)

    def get_device_properties(self, device: int) -> dict[str, Any]:
        d = self._driver.descriptor()
        return {
            "max_shared_mem": max(d.shared_memory_bytes, 1 << 30),
            "multiprocessor_count": d.num_compute_units,
            "max_num_regs": 1 << 16,
            "warpSize": d.warp_size,
            "sm_clock_rate": 0,
            "mem_clock_rate": 0,
            "mem_bus_width": 0,
        }


class SDKDriver(DriverBase):
    #: the backend this driver runs (its `TargetBackend.name`)
    backend_name: ClassVar[str] = ""

    def __init__(self) -> None:
        super().__init__()
        self.utils = SDKUtils(self)
        self.launcher_cls = self._checked_launcher
        self._device = 0

    def _checked_launcher(self, src: Any, metadata: Any) -> Any:
        """`make_launcher`, after checking the kernel was compiled for this backend (a binary of another backend,
        compiled while it was active, would otherwise fail somewhere inside loading with a misleading error) and that
        its metadata matches the digest recorded when it was compiled."""
        target = getattr(metadata, "target", None)
        backend = getattr(target, "backend", None)
        if backend is not None and not self.runs_kernels_of(backend, metadata):
            name = getattr(metadata, "name", "?")
            raise ToolError(
                f"kernel {name!r} was compiled for {backend!r} (target {target}), but the active driver is "
                f"{self.backend_name!r}; compile it again with {self.backend_name!r} active "
                f"(triton_backend_sdk.use({self.backend_name!r}) before the first launch), or activate {backend!r}"
            )
        from .integrity import checked_metadata, expect

        # a cache entry whose metadata does not match its digest is recompiled and the launcher built from the
        # recompile's; Triton then loads the binary under the name in the metadata it read (SDKUtils.load_binary)
        name = str(getattr(metadata, "name", ""))
        metadata, expected = checked_metadata(src, metadata, backend or self.backend_name)
        launcher = self.make_launcher(src, metadata)
        expect(name, expected)
        return launcher

    def runs_kernels_of(self, backend: str, metadata: Any) -> bool:
        """Whether a kernel compiled for `backend` runs on this driver: its own, and those a face of it compiled
        (the face's compiler is this backend's; only the name differs)."""
        from .faces import FACE_OF

        return backend == self.backend_name or getattr(metadata, FACE_OF, None) == self.backend_name

    # ---- what a backend supplies -------------------------------------------------------------------------------

    @classmethod
    @abc.abstractmethod
    def compiler_class(cls) -> type:
        """The backend's `TargetBackend` subclass (for its descriptor)."""

    @abc.abstractmethod
    def load_binary(self, name: str, kernel: bytes, device: int) -> BinaryModule:
        """Make the final stage's bytes runnable; `function` is what the launcher receives."""

    @abc.abstractmethod
    def make_launcher(self, src: Any, metadata: Any) -> Any:
        """A callable with Triton's launcher signature (gx, gy, gz, stream, function, ..., *args)."""

    def unload_binary(self, module: Any) -> None:
        """Release a binary; the default lets garbage collection do it."""

    # ---- DriverBase -----------------------------------------------------------------------------------------

    @classmethod
    def is_active(cls) -> bool:
        selected = selected_backend()
        if selected is not None:
            return selected == cls.backend_name
        return cls.default_active() and not non_sdk_driver_active()

    @classmethod
    def default_active(cls) -> bool:
        """Whether this backend is the default on a machine without another driver (only cpu_ref says yes)."""
        return False

    @functools.cache  # noqa: B019 - drivers are process singletons
    def descriptor(self) -> TargetDescriptor:
        """The compiler class's descriptor, refused unless it is this driver's backend: a vendor driver derived from
        cpu_ref's that kept cpu_ref's `compiler_class` would compile (and run) every kernel as cpu_ref, never
        running the vendor's passes or rules, and say nothing."""
        cls = self.compiler_class()
        if getattr(cls, "name", None) != self.backend_name:
            raise ToolError(
                f"driver {type(self).__qualname__} is for backend {self.backend_name!r}, but its compiler_class() is "
                f"{cls.__module__}.{cls.__qualname__}, backend {getattr(cls, 'name', None)!r}; kernels would compile "
                f"as that backend: override compiler_class() to return the {self.backend_name!r} TargetBackend"
            )
        return cls.describe(None)

    def get_current_target(self) -> Any:
        return self.descriptor().gpu_target()

    def get_current_device(self) -> int:
        return self._device

    def set_current_device(self, device: int) -> None:
        if device != 0:
            raise ValueError(f"{self.backend_name}: device {device} does not exist (only device 0)")
        self._device = device

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def get_active_torch_device(self) -> Any:
        import torch

        return torch.device("cpu")

    def get_device_interface(self) -> type[HostDeviceInterface]:
        return HostDeviceInterface

    def get_benchmarker(self) -> Any:
        """What autotune times configs with: a sample sized by its spread (sdk/benchmarking.py)."""
        from .benchmarking import do_bench

        return do_bench

    def get_empty_cache_for_benchmark(self) -> Any:
        """A buffer of twice the host's last-level cache, rewritten between timed runs to start them cold."""
        from .benchmarking import flush_buffer

        return flush_buffer()

    def clear_cache(self, cache: Any) -> None:
        """One memset: torch's threaded `zero_` took 18-27 ms for 32-64 MiB on a loaded 2-core host (its threads
        wait for busy cores), 10x the memset, and do_bench counts it in the estimate that sizes its sample."""
        from .benchmarking import clear

        clear(cache)

    def map_python_to_cpp_type(self, ty: str) -> str:
        from .launch import cpp_type

        return cpp_type(ty)
