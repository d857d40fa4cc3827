"""What Triton loads for `tinyc`: one concrete backend class. Import-light: no compiler runs at import.

tinyc's device is the host CPU seen through the system C compiler: Triton -> SDK IR (the SDK's reader and shared
legalizations) -> C (stage `c`, this package's rules) -> a shared object (stage `so`, `cc -shared`). It shows a
backend with its own code generator and launcher; the launch contract, argument checks, assert reporting, cache
integrity and plugin hooks are the SDK's.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import subprocess
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from triton.backends.compiler import GPUTarget
from triton_backend_sdk.backend import CompileState, TargetBackend, _kernel_func
from triton_backend_sdk.errors import OptionsError, ToolError
from triton_backend_sdk.options import Options

from . import __version__

if TYPE_CHECKING:
    from triton_backend_sdk.descriptor import TargetDescriptor
    from triton_backend_sdk.lowering import RuleTable
    from triton_backend_sdk.pipeline import Stage

NAME = "tinyc"
#: what the generated C holds: no fp16/bf16/fp8 (a kernel using them is refused at compile time, naming the dtype)
DTYPES = frozenset({"i1", "i8", "i16", "i32", "i64", "fp32", "fp64"})


@dataclass(frozen=True)
class TinyCOptions(Options):
    #: the C compiler (its `--version` is part of the cache key)
    cc: str = "cc"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.check_bounds:
            raise OptionsError("tinyc: check_bounds (TRITON_SDK_CHECK_BOUNDS) is not supported by this backend")


@functools.cache
def compiler_identity(cc: str) -> str:
    """The C compiler's first `--version` line: another compiler (or version) gives other code."""
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolError(f"tinyc: the C compiler {cc!r} does not run ({exc}); install one or pass cc=...") from exc
    return out.splitlines()[0] if out else cc


class TinyCBackend(TargetBackend):
    name = NAME
    version = __version__
    binary_ext = "so"
    options_cls = TinyCOptions
    sdk_api = (1, 1)
    stage_forms: ClassVar[dict[str, tuple[str, str]]] = {
        **TargetBackend.stage_forms,
        "c": ("ir", "c-source"),
        "so": ("c-source", "shared-object"),
    }

    @classmethod
    def describe(cls, target: GPUTarget | None = None) -> TargetDescriptor:
        from triton_backend_sdk.descriptor import TargetDescriptor

        return TargetDescriptor(
            name=NAME,
            arch=platform.machine() or "unknown",
            warp_size=1,
            max_threads_per_program=1 << 16,
            num_compute_units=len(os.sched_getaffinity(0)),
            supported_dtypes=DTYPES,
        )

    def hash(self) -> str:
        return f"{super().hash()}-{hashlib.sha256(compiler_identity('cc').encode()).hexdigest()[:12]}"

    def rule_table(self, options: Options) -> RuleTable:
        from .rules import RULES

        return RULES

    def codegen_stages(self, state: CompileState, options: Options) -> list[Stage]:
        from triton_backend_sdk.pipeline import Stage

        return [
            Stage("c", lambda src, md: self.make_c(src, md, state, options)),
            Stage("so", lambda src, md: self.make_so(src, md, options)),
        ]

    def make_c(self, src: Any, metadata: dict, state: CompileState, options: Options) -> str:
        from .emit import render_module

        module = state.module_for(src)
        name = metadata.get("name") or _kernel_func(module, NAME).sym_name
        source, asserts = render_module(module, name, self.rule_table(options))
        metadata["name"] = name
        metadata["tinyc_asserts"] = asserts
        return source

    def make_so(self, src: str, metadata: dict, options: Options) -> bytes:
        contract = "-ffp-contract=fast" if options.enable_fp_fusion else "-ffp-contract=off"
        flags = [f"-O{min(options.opt_level, 3)}", "-std=gnu11", "-fPIC", "-shared", "-fwrapv", "-fno-strict-aliasing"]
        with tempfile.TemporaryDirectory(prefix="tinyc-") as tmp:
            c_path, so_path = os.path.join(tmp, "kernel.c"), os.path.join(tmp, "kernel.so")
            with open(c_path, "w") as f:
                f.write(src)
            cmd = [options.cc, *flags, contract, "-o", so_path, c_path, "-lm"]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
            except OSError as exc:
                raise ToolError(f"tinyc: the C compiler {options.cc!r} does not run ({exc})") from exc
            if r.returncode != 0:
                raise ToolError(
                    f"tinyc: {options.cc} failed on kernel {metadata['name']!r} (exit {r.returncode}):\n"
                    f"{r.stderr[-4000:]}\n  repro: set TRITON_SDK_DUMP_DIR=<dir> and rerun; the C is "
                    f"<dir>/{metadata['name']}/*.c"
                )
            with open(so_path, "rb") as f:
                return f.read()
