"""The launch side of `check_bounds=True` (sdk/transforms/bounds_check.py): the bounds table a checked kernel takes
after its runtime arguments, computed per launch from the tensors passed. Import-light (no torch at import).

Entry 2i, 2i+1 of the table: the byte offsets from runtime argument i's pointer to the start and to the end of its
tensor's storage; an argument that is no tensor (a scalar, a raw address) gets the whole i64 range, so it is never
reported.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

#: the table parameter's name in launcher messages and signatures
BOUNDS_PARAM = "tb_bounds"
BOUNDS_TYPE = "*i64"
#: compiled-kernel metadata: how many runtime arguments the table covers (set by the bounds_check pass)
METADATA_KEY = "sdk_bounds_args"
#: compiled-kernel metadata: the accesses the pass could not check ("tl.load at file:line:col")
UNCHECKED_KEY = "sdk_bounds_unchecked"


class BoundsWarning(UserWarning):
    """Some accesses of a bounds-checked kernel are not checked (their pointers do not derive from one argument)."""


_ANYWHERE = (-(2**63), 2**63 - 1)


def checked_args(metadata: Any) -> int | None:
    """How many runtime arguments the kernel's bounds table covers; None when the kernel is not bounds-checked.
    Warns (BoundsWarning) naming the accesses the kernel does not check; launchers call it once per loaded kernel."""

    def field(key: str) -> Any:
        return metadata.get(key) if isinstance(metadata, dict) else getattr(metadata, key, None)

    n = field(METADATA_KEY)
    if n is None:
        return None
    unchecked = list(field(UNCHECKED_KEY) or ())
    if unchecked:
        warnings.warn(
            f"check_bounds: {len(unchecked)} access(es) of {field('name')} not checked (their pointers do not "
            f"derive from one pointer argument): " + "; ".join(unchecked),
            BoundsWarning,
            stacklevel=2,
        )
    return int(n)


def extent(arg: Any) -> tuple[int, int]:
    """(start, end) of `arg`'s tensor storage, in bytes from its pointer."""
    t = arg
    if not hasattr(t, "untyped_storage") and hasattr(t, "base") and hasattr(t.base, "untyped_storage"):
        t = t.base  # triton.reinterpret(...) wrappers point into their base tensor
    if not hasattr(t, "untyped_storage") or not hasattr(arg, "data_ptr"):
        return _ANYWHERE
    st = t.untyped_storage()
    start = st.data_ptr() - arg.data_ptr()
    return start, start + st.nbytes()


def bounds_table(runtime_args: Sequence[Any], expected: int, kernel: str) -> Any:
    """The int64 tensor of `expected` (start, end) pairs for these runtime arguments."""
    import torch

    if len(runtime_args) != expected:
        raise TypeError(
            f"check_bounds: kernel {kernel!r} was compiled with bounds for {expected} runtime arguments but is "
            f"launched with {len(runtime_args)}"
        )
    return torch.tensor([v for a in runtime_args for v in extent(a)], dtype=torch.int64)


class BoundsLauncher:
    """Calls `native` (built with the table parameter after the kernel's `len(types)` arguments) with the table
    inserted after them; any hidden arguments a wrapper outside adds (an assert state) stay last."""

    FIXED = 9  # gx, gy, gz, stream, function, packed_metadata, launch_metadata, enter hook, exit hook

    def __init__(self, native: Any, types: list[str], expected: int, kernel: str) -> None:
        self.native = native
        self.n = len(types)
        self.runtime = [i for i, t in enumerate(types) if t != "constexpr"]
        self.expected = expected
        self.kernel = kernel

    def __call__(self, *call_args: Any) -> Any:
        head, args, rest = (
            call_args[: self.FIXED],
            call_args[self.FIXED : self.FIXED + self.n],
            call_args[self.FIXED + self.n :],
        )
        if len(args) != self.n:  # the native launcher names what is missing
            return self.native(*call_args)
        table = bounds_table([args[i] for i in self.runtime], self.expected, self.kernel)
        return self.native(*head, *args, table, *rest)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.native, name)
