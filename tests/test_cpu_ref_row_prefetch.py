"""cpu_ref's row walks prefetch ahead (memory._run_vectors, the shared `tile_model.row_prefetch_distance`): a load
read in vector runs along a row of at least four times the distance, proven contiguous over a line, prefetches the
address 2 KiB ahead of each run; shorter rows do not. Results equal torch's on full and ragged rows."""

from __future__ import annotations

import re

import pytest
import torch
from triton_backend_sdk.analysis.tile_model import PREFETCH_AHEAD_BYTES
from triton_backend_sdk.demo import softmax_kernel


def _prefetches(llir: str) -> list[str]:
    return [line for line in llir.splitlines() if "call void @llvm.prefetch" in line]


@pytest.mark.parametrize(("block", "n_cols", "expect"), [(4096, 4096, True), (4096, 4000, True), (1024, 1024, False)])
def test_softmax_rows_prefetch_ahead(cpu_ref_active, block, n_cols, expect):
    """4096-float rows (16 KiB, a ragged 4000 of them under the mask too) prefetch; 1024-float rows (4 KiB, under
    four times the 2 KiB distance) do not."""
    assert PREFETCH_AHEAD_BYTES == 2048
    x = torch.randn(37, n_cols, generator=torch.Generator().manual_seed(n_cols))
    y = torch.empty_like(x)
    k = softmax_kernel[(37,)](y, x, x.stride(0), y.stride(0), n_cols, BLOCK=block)
    found = _prefetches(k.asm["llir"])
    assert bool(found) == expect
    if expect:  # read prefetches (rw 0) of the cache-keeping kind (locality 3) into the data cache (1)
        assert all(re.search(r"i32 0, i32 3, i32 1\)", line) for line in found)
    torch.testing.assert_close(y, torch.softmax(x, 1), atol=1e-6, rtol=1e-5)
