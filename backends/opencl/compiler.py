"""What Triton's entry point loads for opencl: its one concrete `BaseBackend` subclass.

Kept import-light and failure-free: Triton imports this module while `import triton` runs, so pyopencl (and any
device query) is imported only when a target is described or a kernel compiled.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from triton.backends.compiler import GPUTarget
from triton_backend_sdk import __version__
from triton_backend_sdk.backend import CompileState, TargetBackend, _kernel_func
from triton_backend_sdk.errors import OptionsError, ToolError
from triton_backend_sdk.options import Options

if TYPE_CHECKING:  # `import triton` imports this module: descriptor, rules and pipeline load when first used
    from triton_backend_sdk.descriptor import TargetDescriptor
    from triton_backend_sdk.lowering import RuleTable
    from triton_backend_sdk.pipeline import IRPass, Stage

NAME = "opencl"
#: descriptor feature of a CPU device (one work-item per program; set by runtime.describe, read by the renderer)
CPU_FEATURE = "device_type_cpu"
#: work-items per program for launches that do not pass `work_items` (see OpenCLBackend.parse_options)
WORK_ITEMS_ENV = "TRITON_OPENCL_WORK_ITEMS"


@dataclass(frozen=True)
class OpenCLOptions(Options):
    #: work-items per program (a power of two); 0: the device's choice (see OpenCLBackend.local_size)
    work_items: int = 0
    #: a loop's blocked dot stages its operands in two copies of local memory, one barrier per k step instead of two
    #: (render/dot_blocked.py; where two copies exceed local memory, one). Off by default: on an H100 it made the
    #: 2048^3 fp32 matmul 10 % slower (0.553 vs 0.504 ms, three alternating rounds; results/h100_stop37)
    double_buffer: bool = False
    #: programs of several work-items load a loop's dot operands one iteration ahead (SDK pass
    #: prefetch-dot-operands). Off by default: 3 % slower on the same H100 matmul (0.521 vs 0.504 ms; with the
    #: double buffer 0.570)
    prefetch: bool = False

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

    def ir_passes(self, options: Options) -> list[IRPass]:
        """Pointer tiles advanced through a loop by a splat offset carry that offset as a scalar (the SDK pass cpu_ref
        runs too): one add per iteration instead of a walk over the tile (tutorial 03 on PoCL: 2 x 4,096 pointers
        per k step), and on GPUs no pointer registers updated per element. With the option `prefetch`, programs of
        several work-items (the GPU model) load a loop's dot operands one iteration ahead (`prefetch_dot_operands`),
        so their latency overlaps the current step's fmas; one work-item (a CPU device) gains nothing from it."""
        from triton_backend_sdk.transforms.carried_pointers import CarriedPointerOffsets
        from triton_backend_sdk.transforms.prefetch_dot_operands import PrefetchDotOperands

        passes: list[IRPass] = [CarriedPointerOffsets()]
        if self.local_size(options) > 1 and options.prefetch:
            passes.append(PrefetchDotOperands())
        return passes

    def tile_passes(self, options: Options) -> list[IRPass]:
        """The SDK's thread-locality rewrite, as cpu_ref runs it and as Triton's CUDA path does with layouts: a
        loop-carried reduction keeps lane-wide partials and reduces once after the loop. Lanes come from the
        descriptor's vector width (PoCL: the CPU's; NVIDIA: 128 bits)."""
        from triton_backend_sdk.transforms.thread_locality import ThreadLocality

        return [ThreadLocality()]

    stage_forms: ClassVar[dict[str, tuple[str, str]]] = {
        **TargetBackend.stage_forms,
        "cl": ("ir", "opencl-c"),
        "clbin": ("opencl-c", "opencl-binary"),
    }

    def codegen_stages(self, state: CompileState, options: Options) -> list[Stage]:
        from triton_backend_sdk.pipeline import Stage

        return [
            Stage("cl", lambda src, md: self.make_cl(src, md, state, options)),
            Stage("clbin", lambda src, md: self.make_clbin(src, md, options)),
        ]

    def requested_local_size(self, options: Options) -> int:
        """Work-items per program asked for: `work_items` when given; else num_warps × warp_size on a GPU and one on
        a CPU device (descriptor feature `device_type_cpu`), where a program's tiles become plain loops that the
        device compiler vectorizes, with no barriers between work-items (PoCL runs a work-group's work-items as
        loops on one thread)."""
        size = getattr(options, "work_items", 0)
        if not size:
            cpu = CPU_FEATURE in self.descriptor.features
            size = 1 if cpu else options.num_warps * self.descriptor.warp_size
        return size

    def local_size(self, options: Options) -> int:
        """Work-items per program the kernel is first rendered for: the requested size, lowered to the largest power
        of two the device's work-groups allow (`max_threads_per_program`). How many work-items run a program is the
        backend's choice (any power of two renders the same results), so a limit lowers it instead of failing;
        `make_cl` lowers it further where the built kernel allows fewer (its register use)."""
        return min(self.requested_local_size(options), _floor_pow2(self.descriptor.max_threads_per_program))

    def rule_table(self, options: Options) -> RuleTable:
        from .render import OPENCL, rules_for

        return rules_for(OPENCL, frozenset(self.descriptor.features))

    def make_cl(self, src: Any, metadata: dict, state: CompileState, options: Options) -> str:
        """Render the kernel so that the device can run it: with its scratch in global memory where local memory is
        too small, and on fewer work-items where the built kernel allows fewer than it was rendered for (the
        driver's CL_KERNEL_WORK_GROUP_SIZE, which depends on register use, so it is known only after a build).
        Every choice depends only on the module, the options and the descriptor's device (its arch names the
        driver), so the result is as deterministic as the cache key; `opencl_adapted` in the metadata says what
        was chosen and why."""
        from .render import OPENCL, render_module
        from .runtime import first_launch_crash, kernel_work_group_size

        module = state.module_for(src)
        name = metadata.get("name") or _kernel_func(module, NAME).sym_name
        d = self.descriptor
        adapted: list[str] = []
        requested = self.requested_local_size(options)
        size = self.local_size(options)
        if size < requested:
            adapted.append(
                f"work-items {requested} -> {size}: the device's work-groups hold at most "
                f"{d.max_threads_per_program} work-items"
            )

        buffering: list[str] = []  # the last render's note on its dots' staging copies

        def render(size: int, unroll: bool = True) -> Any:
            lang = OPENCL if unroll else replace(OPENCL, unroll_pragma="")
            args = (self.rule_table(options), lang, size, frozenset(d.features), d.arch, options.enable_fp_fusion)
            rk = render_module(module, name, *args, d.vector_width_bits, double_buffer=options.double_buffer)
            buffering.clear()
            if rk.scratch_bytes > d.shared_memory_bytes and rk.double_buffered:
                two = rk.scratch_bytes
                rk = render_module(module, name, *args, d.vector_width_bits, double_buffer=False)
                if rk.scratch_bytes <= d.shared_memory_bytes:
                    buffering.append(
                        f"one staging copy per dot in a loop (two barriers a step): the kernel needs {two} bytes of "
                        f"local memory with two; the device's local memory has {d.shared_memory_bytes}"
                    )
            if rk.scratch_bytes > d.shared_memory_bytes:
                rk = render_module(
                    module,
                    name,
                    *args,
                    d.vector_width_bits,
                    scratch_space="global",
                    double_buffer=options.double_buffer,
                )
            return rk

        rk = render(size)
        while size > 1:
            allowed = kernel_work_group_size(d.arch, rk.source, name, rk.entry)
            if allowed >= size:
                break
            adapted.append(
                f"work-items {size} -> {_floor_pow2(allowed)}: the device runs this kernel with at most {allowed} "
                f"work-items per work-group (CL_KERNEL_WORK_GROUP_SIZE)"
            )
            size = _floor_pow2(allowed)
            rk = render(size)
        crash = first_launch_crash(d.arch, rk, name)
        if crash is not None:
            rk = render(size, unroll=False)
            again = first_launch_crash(d.arch, rk, name)
            if again is not None:
                if options.dump_dir:  # the cl stage never returns, so the pipeline's own dump has no source to write
                    folder = os.path.join(options.dump_dir, name)
                    os.makedirs(folder, exist_ok=True)
                    with open(os.path.join(folder, "crash.cl"), "w") as f:
                        f.write(rk.source)
                raise ToolError(
                    f"[opencl] the device's OpenCL compiler crashes on kernel {name!r} at its first launch ({again}; "
                    f"also without loop unrolling), so the kernel cannot run here\n  repro: set "
                    f"TRITON_SDK_DUMP_DIR=<dir> and rerun; <dir>/{name}/crash.cl is the OpenCL C it crashes on"
                )
            adapted.append(
                f"no loop unrolling: the device's OpenCL compiler crashed on the unrolled kernel at its first launch "
                f"({crash})"
            )
        adapted += buffering
        if rk.scratch_space == "global":
            adapted.append(
                f"scratch in global memory: the kernel's reductions/dots/layout changes need {rk.scratch_bytes} bytes "
                f"per program; the device's local memory has {d.shared_memory_bytes}"
            )
        metadata["name"] = name
        metadata["shared"] = 0 if rk.scratch_space == "global" else rk.scratch_bytes
        #: bytes of global scratch per program (Triton's name): the launcher passes grid × this many bytes
        metadata["global_scratch_size"] = rk.global_scratch_stride
        metadata["opencl_adapted"] = adapted
        metadata["opencl_local_size"] = size
        metadata["opencl_entry"] = rk.entry
        metadata["opencl_params"] = rk.params
        metadata["opencl_written"] = rk.written
        metadata["opencl_asserts"] = rk.asserts
        metadata["opencl_prints"] = rk.prints
        metadata["opencl_clock_scale"] = rk.clock_scale
        metadata["opencl_chunked"] = rk.chunked
        return rk.source

    def make_clbin(self, src: str, metadata: dict, options: Options) -> bytes:
        from .runtime import build_container

        return build_container(
            self.descriptor.arch, src, metadata["name"], metadata["opencl_local_size"], metadata["opencl_entry"]
        )


def _floor_pow2(n: int) -> int:
    """The largest power of two not above `n` (at least 1)."""
    return 1 << max(0, n.bit_length() - 1)
