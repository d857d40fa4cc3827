"""Compile options: frozen, validated at construction, hashed into Triton's cache key.

Triton's frontend and `JITFunction` read some fields by name (num_warps, debug, supported_fp8_dtypes, ...) and reject
keyword arguments that are not fields, so the field names follow Triton's CUDAOptions where they overlap.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, fields
from typing import Any

from .errors import NumWarpsError, OptionsError

_DOT_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")


@dataclass(frozen=True)
class Options:
    num_warps: int = 4
    num_ctas: int = 1
    num_stages: int = 3
    warp_size: int = 1
    maxnreg: int | None = None
    debug: bool = False
    sanitize_overflow: bool = False
    enable_fp_fusion: bool = True
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    supported_fp8_dtypes: tuple[str, ...] = ("fp8e5", "fp8e4nv", "fp8e4b15", "fp8e4b8", "fp8e5b16")
    deprecated_fp8_dot_operand_dtypes: tuple[str, ...] = ()
    default_dot_input_precision: str = "ieee"
    allowed_dot_input_precisions: tuple[str, ...] = _DOT_PRECISIONS
    max_num_imprecise_acc_default: int = 0
    extern_libs: tuple[tuple[str, str], ...] | None = None
    backend_name: str = ""
    arch: str = ""
    ir_override: str | None = None
    instrumentation_mode: str = ""
    fpsan_homomorphic_casts: bool = False
    #: native optimisation level for the backend's code generator (0-3)
    opt_level: int = 3
    #: directory to write every stage's output to (None: no dump); from TRITON_SDK_DUMP_DIR when not given.
    #: Part of the hash, so that asking for a dump recompiles instead of hitting the cache.
    dump_dir: str | None = None
    #: debug mode: every load/store/atomic asserts that its elements lie inside the tensor of the pointer argument
    #: they derive from (sdk/transforms/bounds_check.py); from TRITON_SDK_CHECK_BOUNDS=1 when not given
    check_bounds: bool = False
    #: CPU backends may keep a dot operand tile one program loaded for the next programs on the same core, where
    #: `analysis/operand_reuse.py` proves it sound (cpu_ref: the B tiles of tutorial 03's matmul); False reads every
    #: tile from memory in every program
    reuse_dot_operands: bool = True

    def __post_init__(self) -> None:
        if self.num_warps < 1 or self.num_warps & (self.num_warps - 1):
            raise NumWarpsError(f"num_warps must be a power of 2 (>= 1), got {self.num_warps}")
        if self.num_ctas != 1:
            raise OptionsError(f"num_ctas must be 1 on SDK backends, got {self.num_ctas}")
        if self.num_stages < 0:
            raise OptionsError(f"num_stages must be >= 0, got {self.num_stages}")
        if self.default_dot_input_precision not in self.allowed_dot_input_precisions:
            raise OptionsError(
                f"default_dot_input_precision {self.default_dot_input_precision!r} is not one of "
                f"{self.allowed_dot_input_precisions}"
            )
        bad = set(self.allowed_dot_input_precisions) - set(_DOT_PRECISIONS)
        if bad:
            raise OptionsError(f"unknown dot input precisions {sorted(bad)}; known: {_DOT_PRECISIONS}")
        if not 0 <= self.opt_level <= 3:
            raise OptionsError(f"opt_level must be in 0..3, got {self.opt_level}")
        if isinstance(self.extern_libs, dict):
            object.__setattr__(self, "extern_libs", tuple(sorted(self.extern_libs.items())))
        for name in ("supported_fp8_dtypes", "deprecated_fp8_dot_operand_dtypes", "allowed_dot_input_precisions"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    @classmethod
    def from_kwargs(cls, opts: dict[str, Any], **defaults: Any) -> Options:
        """Keep the keys that are fields (Triton passes every launch kwarg through here), drop None values."""
        names = {f.name for f in fields(cls)}
        args = dict(defaults)
        args.update({k: v for k, v in opts.items() if k in names and v is not None})
        if "dump_dir" not in args and os.environ.get("TRITON_SDK_DUMP_DIR"):
            args["dump_dir"] = os.environ["TRITON_SDK_DUMP_DIR"]
        if "check_bounds" not in args and os.environ.get("TRITON_SDK_CHECK_BOUNDS", "0") not in ("", "0"):
            args["check_bounds"] = True
        return cls(**args)

    def hash(self) -> str:
        key = "_".join(f"{k}-{v}" for k, v in sorted(self.__dict__.items()))
        return hashlib.sha256(key.encode()).hexdigest()
