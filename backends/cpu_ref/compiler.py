"""What Triton's entry point loads for cpu_ref: its one concrete `BaseBackend` subclass.

Kept import-light (no llvmlite, no torch): Triton imports this module while `import triton` runs.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, ClassVar

from triton.backends.compiler import GPUTarget
from triton_backend_sdk import __version__
from triton_backend_sdk.backend import CompileState, TargetBackend
from triton_backend_sdk.errors import OptionsError

if TYPE_CHECKING:  # `import triton` imports this module: descriptor, rules and pipeline load when first used
    from triton_backend_sdk.descriptor import TargetDescriptor
    from triton_backend_sdk.lowering import RuleTable
    from triton_backend_sdk.options import Options
    from triton_backend_sdk.pipeline import IRPass, Stage

NAME = "cpu_ref"


def _vector_bits(features: tuple[str, ...]) -> int:
    if "+avx512f" in features:
        return 512
    if "+avx2" in features or "+avx" in features:
        return 256
    return 128


@functools.cache
def host_descriptor() -> TargetDescriptor:
    from triton_backend_sdk.descriptor import TargetDescriptor

    from .llvm import host_cpu

    cpu, feature_str = host_cpu()
    features = tuple(sorted(f for f in feature_str.split(",") if f.startswith("+")))
    return TargetDescriptor(
        name=NAME,
        arch=cpu,
        warp_size=1,
        max_threads_per_program=1 << 16,
        shared_memory_bytes=0,
        vector_width_bits=_vector_bits(features),
        num_compute_units=len(os.sched_getaffinity(0)),
        features=features,
    )


class CPURefBackend(TargetBackend):
    name = NAME
    version = __version__
    binary_ext = "obj"

    @classmethod
    def describe(cls, target: GPUTarget | None = None) -> TargetDescriptor:
        from triton_backend_sdk.descriptor import TargetDescriptor

        host = host_descriptor()
        if target is None or str(target.arch) == host.arch:
            return host
        from .llvm import recognized_cpu

        arch = str(target.arch)
        if not recognized_cpu(arch):
            raise OptionsError(
                f"cpu_ref: target arch {arch!r} is not a CPU LLVM knows (this machine is {host.arch!r}); use an LLVM "
                f"CPU name such as 'znver4', 'skylake-avx512', 'x86-64-v3' or 'generic'"
            )
        # another CPU model: LLVM derives its features from the name
        return TargetDescriptor(name=NAME, arch=arch, warp_size=1, max_threads_per_program=1 << 16)

    def ir_passes(self, options: Options) -> list[IRPass]:
        from triton_backend_sdk.transforms.carried_pointers import CarriedPointerOffsets

        return [CarriedPointerOffsets()]

    def tile_passes(self, options: Options) -> list[IRPass]:
        from triton_backend_sdk.transforms.thread_locality import ThreadLocality

        return [ThreadLocality(flat_partials=True)]

    def make_sdkir(self, src: Any, metadata: dict, state: CompileState, options: Options) -> str:
        from .ttgir import is_ttgir, to_ttir

        if not isinstance(src, str):
            src = str(src)
            if is_ttgir(src):
                src = to_ttir(src)
        return super().make_sdkir(src, metadata, state, options)

    stage_forms: ClassVar[dict[str, tuple[str, str]]] = {
        **TargetBackend.stage_forms,
        "llir": ("ir", "llvm-ir"),
        "obj": ("llvm-ir", "object"),
    }

    def codegen_stages(self, state: CompileState, options: Options) -> list[Stage]:
        from triton_backend_sdk.pipeline import Stage

        return [
            Stage("llir", lambda src, md: self.make_llir(src, md, state, options)),
            Stage("obj", lambda src, md: self.make_obj(src, md, options)),
        ]

    def _features(self) -> str:
        # AVX512-BF16/AVX-NE-CONVERT narrow to bf16 with subnormals flushed to zero: leave bf16 to the SDK's rounding.
        # LLVM tunes AVX-512 CPUs (Skylake to Sapphire Rapids) to vectorize at 256 bits, for fear of down-clocking;
        # the loops we leave to its vectorizer then use half the descriptor's width: 4096² layer norm 9.0-10.0 ->
        # 7.5-7.7 ms with `-prefer-256-bit` (no fast-math flags are emitted, so the width never changes results)
        wide = ("-prefer-256-bit",) if self.descriptor.vector_width_bits >= 512 else ()
        return ",".join((*self.descriptor.features, "-avx512bf16", "-avxneconvert", *wide))

    def rule_table(self, options: Options) -> RuleTable:
        """cpu_ref's llvmlite rules; a derived vendor backend returns `RULES.derive(...)` with its own added."""
        from .codegen import RULES

        return RULES

    def make_llir(self, src: Any, metadata: dict, state: CompileState, options: Options) -> str:
        from .codegen import lower_module
        from .codegen.program import kernel_may_fail
        from .llvm import optimize

        module = state.module_for(src)
        name = metadata["name"]
        llmod = lower_module(module, name, self.rule_table(options), options, self.descriptor)
        metadata["cpu_ref_asserts"] = kernel_may_fail(module, name)
        return optimize(str(llmod), self.descriptor.arch, self._features(), options.opt_level, name)

    def make_obj(self, src: str, metadata: dict, options: Options) -> bytes:
        from .llvm import emit_object

        return emit_object(src, self.descriptor.arch, self._features(), options.opt_level, metadata["name"])
