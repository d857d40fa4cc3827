"""`TargetBackend`: Triton's `BaseBackend` implemented once for every SDK backend.

A backend subclasses it and supplies three things: its descriptor (`describe`), its SDK IR passes (optional) and its
code-generation stages after the SDK IR (`codegen_stages`). Everything Triton asks of a backend — options, stages,
cache identity, codegen hooks — is answered here. This class stays abstract: Triton takes the single concrete
`BaseBackend` subclass it finds in a backend's `compiler` module.
"""

from __future__ import annotations

import abc
import functools
import hashlib
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from triton.backends.compiler import BaseBackend, GPUTarget, Language

from . import __version__
from .errors import UnsupportedError
from .options import Options

if TYPE_CHECKING:  # `import triton` imports this module: the IR and the pipeline load with the first compile
    from .descriptor import TargetDescriptor
    from .ir.core import Module
    from .lowering import RuleTable
    from .pipeline import IRPass, Pipeline, Stage


class CompileState:
    """What one compile's stages share: the SDK IR of the last IR stage, so the next stage need not re-read it.

    The text is kept beside the module; if Triton hands the next stage other text (an IR override), it is re-read.
    """

    def __init__(self, backend: TargetBackend, options: Options) -> None:
        self.backend = backend
        self.options = options
        self.module: Module | None = None
        self.text: str | None = None

    def remember(self, module: Module) -> str:
        from .ir import print_module

        self.module = module
        self.text = print_module(module)
        return self.text

    def module_for(self, src: Any) -> Module:
        from .ir import parse_ttir

        if self.module is not None and src is self.text:
            return self.module
        text = src if isinstance(src, str) else _mlir_text(src)
        return parse_ttir(text)


def _mlir_text(mod: Any) -> str:
    """TTIR text with locations (Triton's `str(module)` keeps them; `str_nodebug` would drop them)."""
    return str(mod)


class TargetBackend(BaseBackend):
    #: the Triton backend name (GPUTarget.backend and the `triton.backends` entry-point name)
    name: ClassVar[str] = ""
    #: version of the backend package; part of the cache key
    version: ClassVar[str] = "0"
    #: file extension of the final stage (bytes Triton stores in its cache and hands to the driver)
    binary_ext: ClassVar[str] = "bin"  # type: ignore[misc]
    options_cls: ClassVar[type[Options]] = Options
    #: inclusive range of SDK API versions (`triton_backend_sdk.API_VERSION`) this backend was written for
    sdk_api: ClassVar[tuple[int, int]] = (1, 1)
    #: what each stage takes and gives, in pipeline order (sdk/pipeline.py: "triton-mlir", "ir", or an opaque name
    #: such as "llvm-ir"): where an injected IR pass can run, checked when it is injected; a subclass adds its
    #: code-generation stages
    stage_forms: ClassVar[dict[str, tuple[str, str]]] = {
        "ttir": ("triton-mlir", "triton-mlir"),
        "ttgir": ("ir", "ir"),
        "sdkir": ("ir", "ir"),
    }

    def __init__(self, target: GPUTarget) -> None:
        from .plugins import check_api, ensure_loaded

        check_api("backend", self.name, self.version, self.sdk_api)
        ensure_loaded()  # entry-point plugins, before this backend compiles anything
        super().__init__(target)
        self.descriptor = self.describe(target)

    @classmethod
    def supports_target(cls, target: GPUTarget) -> bool:  # type: ignore[override]
        return target.backend == cls.name

    @classmethod
    @abc.abstractmethod
    def describe(cls, target: GPUTarget | None = None) -> TargetDescriptor:
        """The descriptor for `target`, or for the device this process would run on when `target` is None."""

    @abc.abstractmethod
    def codegen_stages(self, state: CompileState, options: Options) -> list[Stage]:
        """Stages after `sdkir`, ending in the binary stage named `binary_ext`."""

    def rule_table(self, options: Options) -> RuleTable | None:
        """The backend's lowering rules (one per op class). Shared legalizations leave an op alone where this table
        has a rule of the op's own class (the device renders it natively); None: the backend lowers by other means
        and every legalization applies."""
        return None

    def legalize_passes(self, options: Options) -> list[IRPass]:
        """The SDK's shared legalizations of Triton's semantics (`triton_backend_sdk.transforms`), run in the `sdkir`
        stage before `ir_passes`. Override to narrow one where the device does something natively."""
        from .transforms import legalization_passes

        return legalization_passes(self.descriptor, options, self.rule_table(options))

    def ir_passes(self, options: Options) -> list[IRPass]:
        """The backend's own SDK IR passes, run in the `sdkir` stage after the shared legalizations."""
        return []

    def tile_passes(self, options: Options) -> list[IRPass]:
        """Tile-level optimizations of the kernel as Triton wrote it, run in the `ttgir` stage (before the
        legalizations: they see Triton's ops). None by default; a backend adds the SDK's that pay off on its device
        (cpu_ref: `ThreadLocality`)."""
        return []

    # ---- Triton's BaseBackend interface ------------------------------------------------------------------------

    @functools.cache  # noqa: B019 - one backend object per target; cheap key
    def hash(self) -> str:
        """SDK version and sources, the backend's sources and the modules they import, its version and descriptor,
        injected passes and active plugins.

        Cached per backend object; Triton makes a new one after the plugin registry changes (see plugins.invalidate).
        """
        from .code_identity import module_closure
        from .pipeline import injection_identity
        from .plugins import identity

        plugins = identity(self.name)
        # the backend's own package is in source_digest; what its modules import from outside it (a vendor's
        # helper package, editable or not) is in the closure, so editing a helper recompiles
        code = ",".join(f"{m}={d}" for m, d in module_closure(type(self).__module__))
        key = (
            f"{__version__}|{source_digest(type(self).__module__)}|{code}|{self.name}|{self.version}|"
            f"{self.descriptor.hash()}|{injection_identity(self.name)}|{plugins}"
        )
        return hashlib.sha256(key.encode()).hexdigest()

    def parse_options(self, options: dict) -> Options:
        d = self.descriptor
        return self.options_cls.from_kwargs(options, warp_size=d.warp_size, arch=d.arch, backend_name=self.name)

    def load_dialects(self, context: Any) -> None:
        """TTIR needs only the core dialects Triton always loads."""

    def get_module_map(self) -> dict[str, ModuleType]:
        """`tl.extra.libdevice` resolves to CUDA's libdevice names; SDK backends map those symbols to their math."""
        from triton.language.extra.cuda import libdevice

        return {"triton.language.extra.libdevice": libdevice}

    def get_codegen_implementation(self, options: Options) -> dict:
        """`convert_custom_types`: the fp8e4b15 casts Triton's frontend asks the target for (sdk/frontend_casts.py)."""
        from .frontend_casts import convert_custom_types

        return {"min_dot_size": lambda lhs_type, rhs_type: (1, 1, 1), "convert_custom_types": convert_custom_types}

    def pack_metadata(self, metadata: Any) -> tuple:
        """Also the first SDK code to see a kernel Triton read back from its cache, before Triton reads the entry's
        stage files as text: one that cannot be read is named here (sdk/integrity.py checks the rest at load)."""
        from .integrity import check_text_files

        check_text_files(metadata, self.binary_ext)
        return (metadata.num_warps, metadata.num_ctas, metadata.shared)

    def add_stages(self, stages: dict, options: Options, language: Language = Language.TRITON) -> None:
        if language != Language.TRITON:
            raise UnsupportedError(self.name, f"source language {language.name} (SDK backends compile Triton only)")
        from .pipeline import injections_for

        state = CompileState(self, options)
        pipeline = self.make_pipeline(state, options)
        injections = injections_for(self.name)
        pipeline.install(stages, injections, functools.partial(self._run_ir_pass, state, options), options.dump_dir)
        from triton import knobs

        hook = knobs.runtime.add_stages_inspection_hook
        if hook is not None:
            hook(self, stages, options, language, None)
        from .integrity import record_digests

        # after the hook, which may wrap or add stages: the digests are of what Triton then stores
        record_digests(stages, self.binary_ext)

    # ---- the SDK's stages --------------------------------------------------------------------------------------

    def make_pipeline(self, state: CompileState, options: Options) -> Pipeline:
        from .pipeline import Pipeline, Stage

        return Pipeline(
            [
                Stage("ttir", lambda src, md: self.make_ttir(src, md, options)),
                Stage("ttgir", lambda src, md: self.make_ttgir(src, md, state, options)),
                Stage("sdkir", lambda src, md: self.make_sdkir(src, md, state, options)),
                *self.codegen_stages(state, options),
            ],
            self.stage_forms,
        )

    def ttir_pass_table(self, options: Options) -> list[tuple[str, Any]]:
        """Triton's own TTIR passes, named, as the GPU backends run them (tensor descriptors rewritten to pointers).

        Each name `n` is a pair of injection points, `before-pass:ttir.n` and `after-pass:ttir.n`, where Triton C++
        passes (`TritonPass`, e.g. from a Triton plugin library) run; `ttir.end` is the point after the last.
        """
        from triton._C.libtriton import passes

        # block pointers (tt.make_tensor_ptr, which the 3.6 wheel's tl.make_block_ptr emits) become plain pointer
        # arithmetic, as the GPU backends do for targets without block loads; 3.8 lowers tl.make_block_ptr to a
        # tensor descriptor instead and has no such pass, 3.9 removed block pointers
        block_pointers = getattr(passes.ttir, "add_rewrite_tensor_pointer", None)
        return [
            ("inliner", passes.common.add_inliner),
            *([("rewrite_tensor_pointer", block_pointers)] if block_pointers else []),
            ("rewrite_tensor_descriptor_to_pointer", passes.ttir.add_rewrite_tensor_descriptor_to_pointer),
            ("canonicalizer", passes.common.add_canonicalizer),
            ("combine", passes.ttir.add_combine),
            ("reorder_broadcast", passes.ttir.add_reorder_broadcast),
            ("cse", passes.common.add_cse),
            ("symbol_dce", passes.common.add_symbol_dce),
            ("loop_unroll", passes.ttir.add_loop_unroll),
        ]

    def ttir_passes(self, pm: Any, options: Options) -> None:
        """Add the TTIR pass table to `pm`, with the Triton C++ passes injected at its points."""
        from .pipeline import TTIR_PREFIX, injections_for, triton_passes_at

        injections = injections_for(self.name)
        table = self.ttir_pass_table(options)
        names = [n for n, _ in table] + ["end"]
        for inj in injections:
            kind, _, anchor = inj.point.partition(":")
            if kind.endswith("-pass") and anchor.startswith(TTIR_PREFIX) and anchor[len(TTIR_PREFIX) :] not in names:
                raise KeyError(
                    f"injection at {inj.point!r}: no TTIR pass {anchor!r}; TTIR pass points are "
                    f"{[TTIR_PREFIX + n for n in names]}"
                )
        for name, add in [*table, ("end", None)]:
            for p in triton_passes_at(injections, f"before-pass:{TTIR_PREFIX}{name}"):
                p.add_to(pm)
            if add is not None:
                add(pm)
            for p in triton_passes_at(injections, f"after-pass:{TTIR_PREFIX}{name}"):
                p.add_to(pm)

    def make_ttir(self, mod: Any, metadata: dict, options: Options) -> Any:
        from triton._C.libtriton import ir

        pm = ir.pass_manager(mod.context)
        pm.enable_debug()
        self.ttir_passes(pm, options)
        pm.run(mod, "make_ttir")
        metadata["name"] = mod.get_entry_func_name()
        return mod

    def make_ttgir(self, src: Any, metadata: dict, state: CompileState, options: Options) -> str:
        """The tile program after `tile_passes`, as TTIR text. Named `ttgir` because Triton's tools look there for
        the kernel after its tile-level optimizations (`asm["ttgir"]`, `.ttgir` inputs start after it); an SDK
        backend has no GPU layouts, so the text is in Triton's own dialects."""
        from .pipeline import PassContext, PassManager, injections_for

        module = state.module_for(src)
        passes = self.tile_passes(options)
        if passes:
            PassManager(passes).run(module, PassContext(options, self.descriptor, metadata), injections_for(self.name))
        return state.remember(module)

    def make_sdkir(self, src: Any, metadata: dict, state: CompileState, options: Options) -> str:
        from .ir import verify
        from .pipeline import PassContext, PassManager, check_pass_points, injections_for

        module = state.module_for(src)
        kernel = _kernel_func(module, self.name)
        metadata["name"] = kernel.sym_name
        metadata["shared"] = 0
        ctx = PassContext(options, self.descriptor, metadata)
        from .analysis.dtype_check import check_dtypes
        from .custom_ops import MaterializeCustomOps

        check_dtypes(module, self.descriptor)
        from .analysis.native_calls import check_native_calls
        from .plugins import native_signatures

        check_native_calls(module, self.name, native_signatures())

        injections = injections_for(self.name)
        manager = PassManager([MaterializeCustomOps(), *self.legalize_passes(options), *self.ir_passes(options)])
        check_pass_points(injections, [p.name for p in self.tile_passes(options)] + manager.names())
        manager.run(module, ctx, injections)
        verify(module)
        return state.remember(module)

    def _run_ir_pass(self, state: CompileState, options: Options, p: IRPass, src: Any, metadata: dict) -> Any:
        """Run an injected IR pass at a stage point: on the SDK IR of `src`, returning the new text."""
        from .pipeline import PassContext

        module = state.module_for(src)
        p.run(module, PassContext(options, self.descriptor, metadata))
        return state.remember(module)


@functools.cache
def source_digest(backend_module: str) -> str:
    """Digest of the SDK's and a backend package's Python sources, computed once per process."""
    import importlib
    import os

    sdk_dir = os.path.dirname(os.path.abspath(__file__))
    pkg = backend_module.rpartition(".")[0] or backend_module
    backend_dir = os.path.dirname(os.path.abspath(importlib.import_module(pkg).__file__ or sdk_dir))
    h = hashlib.sha256()
    for root in sorted({sdk_dir, backend_dir}):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for fname in sorted(filenames):
                if fname.endswith(".py"):
                    path = os.path.join(dirpath, fname)
                    h.update(os.path.relpath(path, root).encode())
                    with open(path, "rb") as f:
                        h.update(f.read())
    return h.hexdigest()[:16]


def _kernel_func(module: Module, backend: str) -> Any:
    from .ir.ops import Func

    public = [op for op in module.ops if isinstance(op, Func) and op.is_public]
    if len(public) != 1:
        raise UnsupportedError(backend, f"expected one public kernel function in the module, found {len(public)}")
    return public[0]
