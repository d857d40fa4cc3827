"""What Triton's entry point loads for cpu_ref: its one concrete `BaseBackend` subclass.

Kept import-light (no llvmlite, no torch): Triton imports this module while `import triton` runs.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from triton.backends.compiler import GPUTarget
from triton_backend_sdk import __version__
from triton_backend_sdk.backend import CompileState, TargetBackend
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


def _convert_custom_types(input: Any, dst_ty: Any, fp_downcast_rounding: Any = None, _semantic: Any = None) -> Any:
    """fp8e4b15 casts, which Triton's frontend leaves to the target (its IR type is a plain i8): the CUDA path's bit
    conversions, written with integer tensor ops. fp8e4b15 has bias 15 and no inf/NaN, so widening places its seven
    magnitude bits on f16's; narrowing goes through f16 (f32 rounds toward zero first), saturates the magnitude at
    1.75 (NaN and inf too, as PTX's min.f16 returns the non-NaN operand) and rounds half away from zero."""
    import triton.language as tl

    s = _semantic
    i32 = lambda v: s.to_tensor(v)
    if input.type.scalar.is_fp8e4b15():
        w = s.cast(s.bitcast(input, tl.uint8), tl.int32)
        bits = s.or_(s.shl(s.and_(w, i32(0x7F)), i32(7)), s.shl(s.and_(w, i32(0x80)), i32(8)))
        half = s.bitcast(s.cast(s.cast(bits, tl.uint16), tl.int16), tl.float16)
        return half if dst_ty.scalar.is_fp16() else s.cast(half, dst_ty.scalar)
    half = input if input.type.scalar.is_fp16() else s.cast(input, tl.float16, fp_downcast_rounding="rtz")
    bits = s.and_(s.cast(s.bitcast(half, tl.uint16), tl.int32), i32(0xFFFF))
    mag = s.minimum(s.and_(bits, i32(0x7FFF)), i32(0x3F00), tl.PropagateNan.NONE)
    code = s.lshr(s.add(s.shl(mag, i32(1)), i32(0x80), False), i32(8))
    code = s.or_(code, s.and_(s.lshr(bits, i32(8)), i32(0x80)))
    return s.bitcast(s.cast(code, tl.uint8), tl.float8e4b15)


class CPURefBackend(TargetBackend):
    name = NAME
    version = __version__
    binary_ext = "obj"

    @classmethod
    def describe(cls, target: GPUTarget | None = None) -> TargetDescriptor:
        host = host_descriptor()
        if target is None or str(target.arch) == host.arch:
            return host
        # another CPU model: LLVM derives its features from the name
        return TargetDescriptor(name=NAME, arch=str(target.arch), warp_size=1, max_threads_per_program=1 << 16)

    def ir_passes(self, options: Options) -> list[IRPass]:
        from triton_backend_sdk.transforms.carried_pointers import CarriedPointerOffsets

        return [CarriedPointerOffsets()]

    def get_codegen_implementation(self, options: Options) -> dict:
        """Adds `convert_custom_types`, which Triton's frontend needs for fp8e4b15 casts (the CUDA backend supplies
        inline PTX there; cpu_ref the same bit conversions as integer tensor ops)."""
        fns = super().get_codegen_implementation(options)
        fns["convert_custom_types"] = _convert_custom_types
        return fns

    def add_stages(self, stages: dict, options: Options, language: Any = None) -> None:
        """Also names a `ttgir` entry after `ttir`, so that Triton can compile a `.ttgir` file (it starts after the
        stage named by the file's extension). A CPU program has no layouts: for a Python kernel the entry passes the
        TTIR on; a TTGIR input loses its layouts in `sdkir` (see ttgir.py). It is no pipeline stage: no dump, no
        injection point."""
        if language is None:
            super().add_stages(stages, options)
        else:
            super().add_stages(stages, options, language)
        entries = list(stages.items())
        stages.clear()
        for name, fn in entries:
            stages[name] = fn
            if name == "ttir":
                stages["ttgir"] = lambda src, md: src

    def make_sdkir(self, src: Any, metadata: dict, state: CompileState, options: Options) -> str:
        from .ttgir import is_ttgir, to_ttir

        if not isinstance(src, str):
            src = str(src)
            if is_ttgir(src):
                src = to_ttir(src)
        return super().make_sdkir(src, metadata, state, options)

    def codegen_stages(self, state: CompileState, options: Options) -> list[Stage]:
        return [
            Stage("llir", lambda src, md: self.make_llir(src, md, state, options)),
            Stage("obj", lambda src, md: self.make_obj(src, md, options)),
        ]

    def _features(self) -> str:
        # AVX512-BF16/AVX-NE-CONVERT narrow to bf16 with subnormals flushed to zero: leave bf16 to the SDK's rounding
        return ",".join((*self.descriptor.features, "-avx512bf16", "-avxneconvert"))

    def rule_table(self, options: Options) -> RuleTable:
        """cpu_ref's llvmlite rules; a derived vendor backend returns `RULES.derive(...)` with its own added."""
        from .codegen import RULES

        return RULES

    def make_llir(self, src: Any, metadata: dict, state: CompileState, options: Options) -> str:
        from .codegen import lower_module
        from .codegen.debug import ASSERT_STATE
        from .llvm import optimize

        module = state.module_for(src)
        name = metadata["name"]
        llmod = lower_module(module, name, self.rule_table(options), options, self.descriptor)
        metadata["cpu_ref_asserts"] = ASSERT_STATE in llmod.globals
        return optimize(str(llmod), self.descriptor.arch, self._features(), options.opt_level, name)

    def make_obj(self, src: str, metadata: dict, options: Options) -> bytes:
        from .llvm import emit_object

        return emit_object(src, self.descriptor.arch, self._features(), options.opt_level, metadata["name"])
