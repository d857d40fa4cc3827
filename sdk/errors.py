"""Errors the SDK raises. Each compile-time error names what failed, where in the kernel, and how to reproduce it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .ir.core import Location


class SDKError(Exception):
    """Base class of every error the SDK raises on purpose."""


class OptionsError(SDKError, ValueError):
    """An invalid compile option (name and accepted values in the message)."""


class NumWarpsError(OptionsError, AssertionError):
    """num_warps is not a power of two. Also an AssertionError: Triton's own backends assert it, and callers (Triton's
    test_num_warps_pow2 among them) catch that type."""


class UnsupportedError(SDKError, NotImplementedError):
    """The backend cannot compile this construct correctly; raised at compile time, never silently miscompiled."""

    def __init__(self, backend: str, what: str, loc: Location | None = None, repro: str | None = None) -> None:
        self.backend = backend
        self.what = what
        self.loc = loc
        self.repro = repro
        where = f" at {loc}" if loc is not None else ""
        msg = f"[{backend}] {what}{where}"
        if repro:
            msg += f"\n  repro: {repro}"
        super().__init__(msg)


class LoweringError(UnsupportedError):
    """No lowering rule exists for an op (or for its dtype) on this backend."""

    def __init__(
        self,
        backend: str,
        op_name: str,
        dtype: str,
        loc: Location | None = None,
        repro: str | None = None,
        detail: str = "",
    ) -> None:
        self.op_name = op_name
        self.dtype = dtype
        what = f"no lowering rule for op '{op_name}' with dtype {dtype}"
        if detail:
            what += f" ({detail})"
        super().__init__(backend, what, loc, repro)


class UnsupportedDtypeError(UnsupportedError):
    """The kernel computes with a dtype the target's descriptor does not list in `supported_dtypes`."""

    def __init__(
        self, backend: str, dtype: str, loc: Location | None = None, supported: list[str] | None = None
    ) -> None:
        self.dtype = dtype
        listed = f" (it lists {', '.join(supported)})" if supported else ""
        super().__init__(backend, f"dtype {dtype} is not in the {backend} target's supported_dtypes{listed}", loc)


class ToolError(SDKError, RuntimeError):
    """An external tool (LLVM, an OpenCL compiler) failed; the message carries its log."""


class CacheIntegrityError(SDKError, RuntimeError):
    """A Triton cache entry of an SDK kernel does not match the digests recorded when it was compiled (or cannot be
    read back), and it cannot be recompiled in place; `path` is the file, `entry` the entry's directory to delete."""

    def __init__(self, path: str, what: str, entry: str | None = None, hint: str | None = None) -> None:
        self.path = path
        self.what = what
        self.entry = entry
        self.hint = hint
        fix = hint or (
            f"delete the cache entry (rm -r '{entry}') and launch again to recompile it"
            if entry
            else "delete that file's cache entry (its directory under TRITON_CACHE_DIR) and launch again"
        )
        super().__init__(f"corrupted Triton cache entry: {path}: {what}; {fix}")

    def __reduce__(self) -> tuple:  # copy/pickle (subprocess workers) rebuild it from its parts, not its message
        return (type(self), (self.path, self.what, self.entry, self.hint))


class CacheIntegrityWarning(UserWarning):
    """A Triton cache entry of an SDK kernel did not match its digest: it was not run, the kernel was recompiled."""
