"""tools/guard_pages.py places each tensor argument against an inaccessible page: checked on the mapping itself."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

_spec = importlib.util.spec_from_file_location("guard_pages", Path(__file__).parents[1] / "tools" / "guard_pages.py")
guard_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(guard_pages)


def _protection(address: int) -> str:
    for line in Path("/proc/self/maps").read_text().splitlines():
        span, perms = line.split()[:2]
        lo, hi = (int(x, 16) for x in span.split("-"))
        if lo <= address < hi:
            return perms
    return "unmapped"


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/maps")
@pytest.mark.parametrize("place", ["end", "start"])
def test_a_guarded_copy_keeps_values_and_strides_and_touches_the_guard(place: str) -> None:
    keep: list = []
    base = torch.randn(7, 13)
    view = base[1:, ::2]
    g = guard_pages.guarded(view, place, view.element_size(), keep)
    assert g.stride() == view.stride() and g.storage_offset() == view.storage_offset()
    assert torch.equal(g, view)
    storage = g.untyped_storage()
    start, end = storage.data_ptr(), storage.data_ptr() + storage.nbytes()
    outside = end if place == "end" else start - 1
    assert _protection(outside).startswith("---"), _protection(outside)
    assert _protection(start).startswith("rw") and _protection(end - 1).startswith("rw")
