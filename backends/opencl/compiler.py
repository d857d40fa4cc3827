"""What Triton's entry point loads for opencl: its one concrete `BaseBackend` subclass.

Kept import-light and failure-free: Triton imports this module while `import triton` runs, so pyopencl (and any
device query) is imported only when a target is described or a kernel compiled.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from triton.backends.compiler import GPUTarget
from triton_backend_sdk import __version__
from triton_backend_sdk.backend import CompileState, TargetBackend, _kernel_func
from triton_backend_sdk.descriptor import TargetDescriptor
from triton_backend_sdk.errors import OptionsError, UnsupportedError
from triton_backend_sdk.lowering import RuleTable
from triton_backend_sdk.options import Options
from triton_backend_sdk.pipeline import Stage

NAME = "opencl"
#: descriptor feature of a CPU device (one work-item per program; set by runtime.describe, read by the renderer)
CPU_FEATURE = "device_type_cpu"
#: work-items per program for launches that do not pass `work_items` (see OpenCLBackend.parse_options)
WORK_ITEMS_ENV = "TRITON_OPENCL_WORK_ITEMS"


@dataclass(frozen=True)
class OpenCLOptions(Options):
    #: work-items per program (a power of two); 0: the device's choice (see OpenCLBackend.local_size)
    work_items: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.work_items < 0 or self.work_items & (self.work_items - 1):
            raise OptionsError(f"work_items must be 0 or a power of two, got {self.work_items}")


class OpenCLBackend(TargetBackend):
    """Triton → SDK IR → OpenCL C (stage `cl`) → the device's program binary (stage `clbin`)."""

    name = NAME
    options_cls = OpenCLOptions
    version = __version__
    binary_ext = "clbin"

    @classmethod
    def describe(cls, target: GPUTarget | None = None) -> TargetDescriptor:
        from .runtime import describe

        return describe(None if target is None else str(target.arch))

    @classmethod
    def devices(cls) -> list[str]:
        """Every OpenCL device, by the index TRITON_OPENCL_DEVICE takes; `triton-sdk devices` prints these."""
        from .runtime import device_lines

        return device_lines()

    def parse_options(self, options: dict) -> Options:
        """`TRITON_OPENCL_WORK_ITEMS` sets the work-items per program of kernels launched without `work_items`: on a
        CPU device, `TRITON_OPENCL_WORK_ITEMS=128` runs the GPU execution model (tiles spread over work-items, local
        memory and barriers), which is how CI tests that model on PoCL."""
        env = os.environ.get(WORK_ITEMS_ENV)
        if env and options.get("work_items") is None:
            try:
                options = {**options, "work_items": int(env)}
            except ValueError:
                raise OptionsError(f"{WORK_ITEMS_ENV}={env!r} is not an integer") from None
        return super().parse_options(options)

    def codegen_stages(self, state: CompileState, options: Options) -> list[Stage]:
        return [
            Stage("cl", lambda src, md: self.make_cl(src, md, state, options)),
            Stage("clbin", lambda src, md: self.make_clbin(src, md, options)),
        ]

    def local_size(self, options: Options) -> int:
        """Work-items per program: `work_items` when given; else num_warps × warp_size on a GPU and one on a CPU
        device (descriptor feature `device_type_cpu`), where a program's tiles become plain loops that the device
        compiler vectorizes, with no barriers between work-items (PoCL runs a work-group's work-items as loops on
        one thread)."""
        size = getattr(options, "work_items", 0)
        if not size:
            cpu = CPU_FEATURE in self.descriptor.features
            size = 1 if cpu else options.num_warps * self.descriptor.warp_size
        if size > self.descriptor.max_threads_per_program:
            raise UnsupportedError(
                NAME,
                f"num_warps={options.num_warps} needs work-groups of {size} work-items; "
                f"the device allows {self.descriptor.max_threads_per_program}",
            )
        return size

    def rule_table(self, options: Options) -> RuleTable:
        from .render import OPENCL, rules_for

        return rules_for(OPENCL, frozenset(self.descriptor.features))

    def make_cl(self, src: Any, metadata: dict, state: CompileState, options: Options) -> str:
        from .render import OPENCL, render_module

        module = state.module_for(src)
        name = metadata.get("name") or _kernel_func(module, NAME).sym_name
        d = self.descriptor
        size = self.local_size(options)
        rk = render_module(
            module,
            name,
            self.rule_table(options),
            OPENCL,
            size,
            frozenset(d.features),
            d.arch,
            options.enable_fp_fusion,
            d.vector_width_bits,
        )
        if rk.scratch_bytes > d.shared_memory_bytes:
            raise UnsupportedError(
                NAME,
                f"kernel {name!r} needs {rk.scratch_bytes} bytes of local memory for its "
                f"reductions/dots/layout changes; the device has {d.shared_memory_bytes} "
                f"(use smaller blocks)",
            )
        metadata["name"] = name
        metadata["shared"] = rk.scratch_bytes
        metadata["opencl_local_size"] = size
        metadata["opencl_entry"] = rk.entry
        metadata["opencl_params"] = rk.params
        metadata["opencl_written"] = rk.written
        metadata["opencl_asserts"] = rk.asserts
        metadata["opencl_prints"] = rk.prints
        metadata["opencl_clock_scale"] = rk.clock_scale
        return rk.source

    def make_clbin(self, src: str, metadata: dict, options: Options) -> bytes:
        from .runtime import build_container

        return build_container(
            self.descriptor.arch, src, metadata["name"], metadata["opencl_local_size"], metadata["opencl_entry"]
        )
