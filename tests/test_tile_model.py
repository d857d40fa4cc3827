"""The shared tile model (sdk/analysis/tile_model.py): the store-or-recompute decision both backends make, and the
vector plans derived from a vector width."""

from __future__ import annotations

import pytest
from triton_backend_sdk.analysis.tile_model import (
    CHEAP,
    CHEAP_INDEX,
    needs_storage,
    reduction_plan,
    register_block,
    stored,
)
from triton_backend_sdk.ir import parse_ttir

_TEXT = """module {
  tt.func public @k(%x: !tt.ptr<f32>, %n: i32) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %once = arith.muli %r, %r : tensor<64xi32>
    %twice = arith.addi %r, %r : tensor<64xi32>
    %a = arith.addi %once, %twice : tensor<64xi32>
    %b = arith.muli %twice, %a : tensor<64xi32>
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %c1 = arith.constant 1 : i32
    %l = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %b) -> (tensor<64xi32>) : i32 {
      %s = arith.addi %acc, %once : tensor<64xi32>
      scf.yield %s : tensor<64xi32>
    }
    tt.return
  }
}"""


def _values() -> dict[str, object]:
    module = parse_ttir(_TEXT)
    return {r.name: r for op in module.walk() for r in op.results if r.name}


def test_a_value_used_twice_or_inside_a_loop_needs_storage() -> None:
    v = _values()
    assert needs_storage(v["twice"])  # two users
    assert needs_storage(v["once"])  # its second user is in the loop body
    assert not needs_storage(v["a"])  # one user, same block


def test_cheap_generators_are_recomputed_index_arithmetic_longer() -> None:
    twice = _values()["twice"]
    assert not stored(CHEAP, twice) and stored(CHEAP + 1, twice)
    assert not stored(CHEAP_INDEX, twice, index_only=True) and stored(CHEAP_INDEX + 1, twice, index_only=True)
    assert not stored(100, _values()["a"])


@pytest.mark.parametrize(
    "bits,elem,n,plan",
    [(512, 32, 64, (16, 4)), (512, 32, 32, (16, 2)), (128, 32, 64, (4, 4)), (256, 64, 4, (4, 1)), (512, 32, 8, None)],
)
def test_reduction_lanes_follow_the_vector_width(bits: int, elem: int, n: int, plan: tuple | None) -> None:
    assert reduction_plan(bits, elem, n) == plan


@pytest.mark.parametrize(
    "bits,elem,m,n,plan",
    [
        (512, 32, 16, 16, (8, 1, 16)),
        (512, 32, 64, 64, (4, 4, 16)),
        (256, 32, 64, 64, (2, 4, 8)),
        (128, 32, 16, 16, (2, 4, 4)),
        (128, 64, 8, 2, (8, 1, 2)),
        (512, 32, 16, 8, None),
    ],
)
def test_dot_register_blocks_fit_the_accumulator_registers(bits: int, elem: int, m: int, n: int, plan) -> None:
    assert register_block(bits, elem, m, n) == plan
