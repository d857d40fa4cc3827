"""opencl launches in pieces (backends/opencl/launch_chunks.py): the plan covers the grid once in program order, the
kernel sees whole-grid program ids and counts in every piece, and kernels whose programs may wait for each other are
never split. Ctrl-C between pieces: tests/test_launch_interrupt.py."""

from __future__ import annotations

import itertools

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from triton_backend_sdk.analysis.program_waits import programs_may_wait_for_each_other
from triton_backend_sdk.backends.opencl import launch_chunks as chunks
from triton_backend_sdk.backends.opencl.render import OPENCL, OPENCL_RULES, render_module
from triton_backend_sdk.ir import parse_ttir


@pytest.mark.parametrize("grid", [(1, 1, 1), (1000, 1, 1), (7, 33, 5), (3, 2, 300), (5, 1, 9)])
@pytest.mark.parametrize("programs", [1, 2, 6, 7, 231, 256, 10_000])
def test_boxes_cover_the_grid_once_in_program_order(grid, programs):
    seen = []
    for (x, y, z), (nx, ny, nz) in chunks.boxes(grid, programs):
        assert 1 <= nx * ny * nz <= programs
        for k, j, i in itertools.product(range(z, z + nz), range(y, y + ny), range(x, x + nx)):
            seen.append((k * grid[1] + j) * grid[0] + i)
    assert seen == list(range(grid[0] * grid[1] * grid[2]))


def test_piece_size_follows_the_measured_time():
    assert chunks.piece_programs(chunks.FIRST_PIECE, None) is None  # a small first launch: one enqueue
    assert chunks.piece_programs(100_000, None) == 100_000 // chunks.FIRST_PIECES  # a long one: measured in pieces
    assert chunks.piece_programs(1000, chunks.PIECE_SECONDS / 1000) is None  # predicted within a piece
    assert chunks.piece_programs(1000, chunks.PIECE_SECONDS / 10) == 10
    assert chunks.piece_programs(1000, 10.0) == 1  # one program longer than a piece: one per piece
    assert chunks.measured(None, 2.0, 1000) == 0.002
    assert chunks.measured(0.004, 2.0, 1000) == 0.003


LOOP_ATOMIC = """
module {
  tt.func public @k(%x: !tt.ptr<i32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %i = %c0 to %n step %c1  : i32 {
      %old = tt.atomic_rmw add, acq_rel, gpu, %x, %c1 : (!tt.ptr<i32>, i32) -> i32
    }
    tt.return
  }
}
"""
STORE = """
module {
  tt.func public @k(%x: !tt.ptr<i32>, %n: i32) {
    %p = tt.get_program_id x : i32
    %q = tt.get_num_programs y : i32
    %s = arith.addi %p, %q : i32
    tt.store %x, %s : !tt.ptr<i32>
    tt.return
  }
}
"""


def _render(text: str, local_size: int = 128):
    return render_module(parse_ttir(text), "k", OPENCL_RULES, OPENCL, local_size, frozenset(), "test-device")


def test_a_splittable_kernel_adds_the_pieces_offset_and_takes_the_grid():
    rk = _render(STORE)
    assert rk.chunked and not programs_may_wait_for_each_other(parse_ttir(STORE))
    check_lines(
        rk.source,
        """
        __kernel void tb_k(__global int *a_x0_base, ulong a_x0_off, int a_n0, int tb_grid0, int tb_grid1, int tb_grid2) {
        const int tb_pid0 = (int)(get_group_id(0) + get_global_offset(0) / 128u), tb_npid0 = tb_grid0;
        const int tb_pid1 = (int)(get_group_id(1) + get_global_offset(1)), tb_npid1 = tb_grid1;
        """,
    )


def test_a_kernel_polling_memory_in_a_loop_is_never_split():
    """An atomic in a loop may be a wait for another program (a lock, a flag): splitting the grid could hang it."""
    rk = _render(LOOP_ATOMIC)
    assert programs_may_wait_for_each_other(parse_ttir(LOOP_ATOMIC)) and not rk.chunked
    assert "tb_grid" not in rk.source and "get_global_offset" not in rk.source
    assert "tb_npid0 = (int)get_num_groups(0)" in rk.source


@triton.jit
def _ids(O, BLOCK: tl.constexpr):
    x, y, z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    nx, ny, nz = tl.num_programs(0), tl.num_programs(1), tl.num_programs(2)
    lin = (z * ny + y) * nx + x
    offs = tl.arange(0, BLOCK)
    tl.store(O + lin * BLOCK + offs, lin * 1_000_000 + nx * 10_000 + ny * 100 + nz + offs * 0)


@pytest.mark.parametrize("grid", [(37, 1, 1), (5, 3, 2), (3, 2, 7)])
@pytest.mark.parametrize("piece_seconds", [1e-12, 1e-5, chunks.PIECE_SECONDS])
def test_every_piece_sees_whole_grid_ids_and_counts(backend, monkeypatch, grid, piece_seconds):
    """On opencl with one work-item per program and with 128 (the offset is in work-items); cpu_ref (which runs
    chunks of programs itself) as the check of the check."""
    monkeypatch.setattr(chunks, "PIECE_SECONDS", piece_seconds)
    monkeypatch.setattr(chunks, "FIRST_PIECE", 4)
    n = grid[0] * grid[1] * grid[2]
    want = (torch.arange(n) * 1_000_000 + grid[0] * 10_000 + grid[1] * 100 + grid[2]).repeat_interleave(4)
    for _ in range(3):  # the first launch is measured in pieces; later ones are sized from it
        o = torch.full((n * 4,), -1, dtype=torch.int64)
        _ids[grid](o, BLOCK=4)
        assert torch.equal(o, want)
