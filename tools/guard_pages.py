"""Run the conformance op suite with every tensor argument placed against an inaccessible page, so that a kernel
touching one byte past its tensor's end (or before its start) faults at once instead of reading a neighbour's heap.

Why: CI lost pytest-xdist workers now and then in cpu_ref tests, with no stack: a read just past a buffer faults only
where the allocator happened to put an unmapped page there. Here every buffer is placed so. Each case is named on
stderr before it runs; a fault ends the process with faulthandler's stack under the last name.

    .venv/bin/python tools/guard_pages.py --backend cpu_ref --place end [-k SUBSTRING] [--skip N]
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import mmap
import sys
from typing import Any

import torch

PAGE = mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def _guarded_bytes(nbytes: int, place: str, align: int) -> tuple[mmap.mmap, int]:
    """An anonymous mapping holding `nbytes` with a PROT_NONE page right after them (`place="end"`, the start rounded
    down to `align`) or right before them (`place="start"`); returns the mapping and the data's offset in it."""
    body = max(-(-nbytes // PAGE), 1) * PAGE
    mm = mmap.mmap(-1, body + PAGE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    if place == "end":
        guard, offset = base + body, (body - nbytes) // align * align
    else:
        guard, offset = base, PAGE
    if _libc.mprotect(guard, PAGE, 0) != 0:
        raise OSError(ctypes.get_errno(), "mprotect failed")
    return mm, offset


def guarded(t: torch.Tensor, place: str, align: int, keep: list[Any]) -> torch.Tensor:
    """A copy of `t` (same sizes, strides and storage offset) whose storage sits against a guard page."""
    storage = t.untyped_storage()
    nbytes = storage.nbytes()
    mm, offset = _guarded_bytes(nbytes, place, align)
    keep.append(mm)
    raw = torch.frombuffer(mm, dtype=torch.uint8, count=nbytes, offset=offset) if nbytes else torch.empty(0)
    raw.copy_(torch.frombuffer(bytearray(bytes(storage)), dtype=torch.uint8) if nbytes else raw)
    out = torch.empty(0, dtype=t.dtype)
    out.set_(raw.untyped_storage(), t.storage_offset(), t.size(), t.stride())
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="cpu_ref")
    p.add_argument("--place", choices=["end", "start"], default="end")
    p.add_argument("--align", type=int, default=1, help="round an end-placed buffer's start down to this many bytes")
    p.add_argument("-k", default="", help="only cases whose id contains this")
    p.add_argument("--skip", type=int, default=0, help="skip the first N matching cases")
    args = p.parse_args(argv)
    faulthandler.enable(all_threads=True)

    import triton_backend_sdk
    from triton_backend_sdk.conformance import suite
    from triton_backend_sdk.conformance.cases import all_cases

    triton_backend_sdk.use(args.backend)
    original = suite.make_launch
    keep: list[Any] = []

    def guarded_launch(case: Any, dtype: str, shape: tuple[int, ...], seed: int) -> Any:
        launch = original(case, dtype, shape, seed)
        for i, a in enumerate(launch.args):
            if isinstance(a, torch.Tensor):
                launch.args[i] = guarded(a, args.place, max(args.align, a.element_size()), keep)
        return launch

    suite.make_launch = guarded_launch
    items = [(c, d, s) for c in all_cases() for d, s in c.params()]
    items = [it for it in items if args.k in f"{it[0].name}-{it[1]}-{'x'.join(map(str, it[2]))}"][args.skip :]
    counts: dict[str, int] = {}
    for n, (case, dtype, shape) in enumerate(items):
        print(f"[{n}] {case.name}-{dtype}-{'x'.join(map(str, shape))}", file=sys.stderr, flush=True)
        r = suite.run_case(case, dtype, shape, 20261129)
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
        if r.outcome in ("fail", "error"):
            print(f"  {r.outcome}: {r.message[:300]}", file=sys.stderr, flush=True)
        del r
        keep.clear()
    print(f"{len(items)} cases placed at the {args.place} of a guard page: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
