"""The shared tile model (sdk/analysis/tile_model.py): the store-or-recompute decision both backends make, and the
vector plans derived from a vector width."""

from __future__ import annotations

import pytest
from triton_backend_sdk.analysis.tile_model import (
    CHAIN_COST,
    CHEAP,
    CHEAP_INDEX,
    MAX_FUSED_COST,
    needs_storage,
    reduction_plan,
    register_block,
    stored,
)
from triton_backend_sdk.analysis.uses import load_sink, mask_implied_by_sink, sink_of
from triton_backend_sdk.ir import parse_ttir

_TEXT = """module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<i32>, %n: i32) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %once = arith.muli %r, %r : tensor<64xi32>
    %twice = arith.addi %r, %r : tensor<64xi32>
    %a = arith.addi %once, %twice : tensor<64xi32>
    %b = arith.muli %twice, %a : tensor<64xi32>
    %sinks = arith.subi %r, %r : tensor<64xi32>
    %ps = tt.splat %y : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>>
    %pp = tt.addptr %ps, %r : tensor<64x!tt.ptr<i32>>, tensor<64xi32>
    tt.store %pp, %sinks : tensor<64x!tt.ptr<i32>>
    %e = tt.expand_dims %sinks {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %bc = tt.broadcast %e : tensor<1x64xi32> -> tensor<4x64xi32>
    %ld = tt.load %pp : tensor<64x!tt.ptr<i32>>
    %sq = arith.muli %ld, %ld : tensor<64xi32>
    %sum = arith.addi %sq, %ld : tensor<64xi32>
    tt.store %pp, %sum : tensor<64x!tt.ptr<i32>>
    %ld2 = tt.load %pp : tensor<64x!tt.ptr<i32>>
    %cross = arith.addi %ld2, %ld2 : tensor<64xi32>
    tt.store %pp, %ld2 : tensor<64x!tt.ptr<i32>>
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %c1 = arith.constant 1 : i32
    %l:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %b, %acc2 = %bc) -> (tensor<64xi32>, tensor<4x64xi32>) : i32 {
      %s = arith.addi %acc, %once : tensor<64xi32>
      scf.yield %s, %acc2 : tensor<64xi32>, tensor<4x64xi32>
    }
    tt.return
  }
}"""


def _values() -> dict[str, object]:
    module = parse_ttir(_TEXT)
    return {r.name: r for op in module.walk() for r in op.results if r.name}


def test_a_value_used_twice_or_inside_a_loop_needs_storage() -> None:
    v = _values()
    assert needs_storage(v["sinks"])  # two users leading to two sinks (a store and the loop)
    assert needs_storage(v["once"])  # its second user is in the loop body
    assert not needs_storage(v["a"])  # one user, same block


def test_several_uses_in_one_elementwise_chain_are_recomputed() -> None:
    """`twice` feeds `a` and `b = twice * a`, one chain into one sink (the loop's init): each element of the sink
    evaluates `twice` at that element only, so it is recomputed there unless that costs more than CHAIN_COST."""
    v = _values()
    assert sink_of(v["twice"]) is v["l"].owner
    assert not needs_storage(v["twice"]) and not needs_storage(v["twice"], CHAIN_COST)
    assert needs_storage(v["twice"], CHAIN_COST + 1)
    assert not stored(CHEAP + 1, v["twice"])


def test_load_sink_accepts_several_uses_in_one_chain_only_with_no_write_between() -> None:
    v = _values()
    ld, ld2 = v["ld"].owner, v["ld2"].owner
    assert load_sink(ld) is v["sum"].uses[0][0]  # ld * ld + ld, read once per element in the store's loop
    assert load_sink(ld2) is None  # two sinks: the unused `cross` and the store
    assert sink_of(v["sinks"]) is None and sink_of(v["cross"]) is None  # two sinks; no use at all


def test_cheap_generators_are_recomputed_index_arithmetic_longer() -> None:
    sinks = _values()["sinks"]
    assert not stored(CHEAP, sinks) and stored(CHEAP + 1, sinks)
    assert not stored(CHEAP_INDEX, sinks, index_only=True) and stored(CHEAP_INDEX + 1, sinks, index_only=True)
    # a single-use generator is recomputed up to MAX_FUSED_COST, then stored: the nested expression stays bounded
    assert not stored(MAX_FUSED_COST, _values()["a"]) and stored(MAX_FUSED_COST + 1, _values()["a"])


@pytest.mark.parametrize(
    "bits,elem,n,plan",
    [(512, 32, 64, (16, 4)), (512, 32, 32, (16, 2)), (128, 32, 64, (4, 4)), (256, 64, 4, (4, 1)), (512, 32, 8, None)],
)
def test_reduction_lanes_follow_the_vector_width(bits: int, elem: int, n: int, plan: tuple | None) -> None:
    assert reduction_plan(bits, elem, n) == plan


@pytest.mark.parametrize(
    "bits,elem,n,plan", [(256, 32, 1024, (8, 2)), (128, 32, 1024, (4, 2)), (256, 64, 4, (4, 1)), (256, 8, 16, None)]
)
def test_reduction_accumulators_can_be_capped(bits: int, elem: int, n: int, plan: tuple | None) -> None:
    """opencl's work-item partials: at most 2 vectors of lanes (a scalar array the device compiler vectorizes)."""
    assert reduction_plan(bits, elem, n, max_acc=2) == plan


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


_MASKED = """module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %ix: !tt.ptr<i32>, %n: i32) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %s = tt.splat %n : i32 -> tensor<64xi32>
    %m = arith.cmpi slt, %r, %s : tensor<64xi32>
    %m2 = arith.cmpi sgt, %r, %s : tensor<64xi32>
    %px = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %qx = tt.addptr %px, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %py = tt.splat %y : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %qy = tt.addptr %py, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %same = tt.load %qx, %m : tensor<64x!tt.ptr<f32>>
    %c = arith.mulf %same, %same : tensor<64xf32>
    tt.store %qy, %c, %m : tensor<64x!tt.ptr<f32>>
    %other = tt.load %qx, %m2 : tensor<64x!tt.ptr<f32>>
    tt.store %qy, %other, %m : tensor<64x!tt.ptr<f32>>
    %moved = tt.load %qx, %m : tensor<64x!tt.ptr<f32>>
    %rev = tt.reshape %moved : tensor<64xf32> -> tensor<8x8xf32>
    %t = tt.trans %rev {order = array<i32: 1, 0>} : tensor<8x8xf32> -> tensor<8x8xf32>
    %back = tt.reshape %t : tensor<8x8xf32> -> tensor<64xf32>
    tt.store %qy, %back, %m : tensor<64x!tt.ptr<f32>>
    %pi = tt.splat %ix : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>>
    %qi = tt.addptr %pi, %r : tensor<64x!tt.ptr<i32>>, tensor<64xi32>
    %idx = tt.load %qi, %m : tensor<64x!tt.ptr<i32>>
    %qz = tt.addptr %py, %idx : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %one = arith.constant dense<1.0> : tensor<64xf32>
    tt.store %qz, %one, %m : tensor<64x!tt.ptr<f32>>
    tt.return
  }
}"""


def test_a_store_under_the_loads_mask_at_the_same_index_implies_it() -> None:
    """Only a store of the load's value (not through a transpose, not as its address) under the very same mask
    value makes the load's own mask test redundant inside the store's test."""
    module = parse_ttir(_MASKED)
    v = {r.name: r for op in module.walk() for r in op.results if r.name}
    for name, implied in (("same", True), ("other", False), ("moved", False), ("idx", False)):
        load = v[name].owner
        sink = load_sink(load)
        assert sink is not None, name
        assert mask_implied_by_sink(load, sink) is implied, name
