"""Golden tests of the AxisInfo analysis (sdk/analysis/axis_info.py): SDK IR text in, per-value facts out.

Each case is a small function; the expected text lists `%name: facts` for the values the rule under test defines
(every listed line must match exactly). Facts follow Triton's AxisInfo: runs of consecutive integers (contiguity),
the power of two that divides each run's first element (divisibility, bytes for pointers), runs of equal values
(constancy); `max` is the divisibility of 0.
"""

from __future__ import annotations

import itertools
import random
import textwrap

import pytest
from triton_backend_sdk.analysis.axis_info import MAX_DIV, AxisInfo, analyze, join, pow2_divisor
from triton_backend_sdk.ir import parse_ttir


def facts(body: str, args: str = "") -> dict[str, str]:
    src = f"module {{\n  tt.func public @k({args}) {{\n{textwrap.indent(textwrap.dedent(body), '    ')}\n    tt.return\n  }}\n}}\n"
    func = parse_ttir(src).ops[0]
    out = {}
    for line in analyze(func).text().splitlines():
        name, _, rest = line.partition(": ")
        out[name] = rest
    return out


def check(body: str, expected: str, args: str = "") -> None:
    got = facts(body, args)
    for line in textwrap.dedent(expected).strip().splitlines():
        name, _, want = line.strip().partition(": ")
        assert got.get(name) == want, f"{name}: got {got.get(name)!r}, want {want!r}\nall:\n{got}"


ARGS = (
    "%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %h: !tt.ptr<f16> {tt.divisibility = 16 : i32}, "
    "%q: !tt.ptr<f32>, %n: i32 {tt.divisibility = 16 : i32}, %m: i32"
)

PROLOGUE = """
%c128 = arith.constant 128 : i32
%pid = tt.get_program_id x : i32
%base = arith.muli %pid, %c128 : i32
%r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
%bs = tt.splat %base : i32 -> tensor<128xi32>
%offs = arith.addi %bs, %r : tensor<128xi32>
"""


def test_signature_constants_range_program_id() -> None:
    check(
        PROLOGUE
        + """
        %c0 = arith.constant 0 : i32
        %c12 = arith.constant dense<12> : tensor<128xi32>
        %r2 = tt.make_range {end = 136 : i32, start = 8 : i32} : tensor<128xi32>
        """,
        """
        %p: contiguity=[1] divisibility=[16] constancy=[1]
        %q: contiguity=[1] divisibility=[1] constancy=[1]
        %n: contiguity=[1] divisibility=[16] constancy=[1]
        %m: contiguity=[1] divisibility=[1] constancy=[1]
        %c128: contiguity=[1] divisibility=[128] constancy=[1] constant=128
        %pid: contiguity=[1] divisibility=[1] constancy=[1]
        %base: contiguity=[1] divisibility=[128] constancy=[1]
        %r: contiguity=[128] divisibility=[max] constancy=[1]
        %bs: contiguity=[1] divisibility=[128] constancy=[128]
        %offs: contiguity=[128] divisibility=[128] constancy=[1]
        %c0: contiguity=[1] divisibility=[max] constancy=[1] constant=0
        %c12: contiguity=[1] divisibility=[4] constancy=[128] constant=12
        %r2: contiguity=[128] divisibility=[8] constancy=[1]
        """,
        ARGS,
    )


def test_addptr_counts_bytes_of_the_pointee() -> None:
    check(
        PROLOGUE
        + """
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
        %ptrs = tt.addptr %ps, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
        %hs = tt.splat %h : !tt.ptr<f16> -> tensor<128x!tt.ptr<f16>>
        %hptrs = tt.addptr %hs, %r : tensor<128x!tt.ptr<f16>>, tensor<128xi32>
        %qs = tt.splat %q : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
        %qptrs = tt.addptr %qs, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
        %c1 = arith.constant dense<1> : tensor<128xi32>
        %offs1 = arith.addi %offs, %c1 : tensor<128xi32>
        %uptrs = tt.addptr %ps, %offs1 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
        %one = tt.addptr %p, %n : !tt.ptr<f32>, i32
        """,
        """
        %ptrs: contiguity=[128] divisibility=[16] constancy=[1]
        %hptrs: contiguity=[128] divisibility=[16] constancy=[1]
        %qptrs: contiguity=[128] divisibility=[1] constancy=[1]
        %offs1: contiguity=[128] divisibility=[1] constancy=[1]
        %uptrs: contiguity=[128] divisibility=[4] constancy=[1]
        %one: contiguity=[1] divisibility=[16] constancy=[1]
        """,
        ARGS,
    )


def test_add_sub_mul() -> None:
    check(
        PROLOGUE
        + """
        %c4 = arith.constant dense<4> : tensor<128xi32>
        %c1 = arith.constant dense<1> : tensor<128xi32>
        %twice = arith.addi %r, %r : tensor<128xi32>
        %back = arith.subi %offs, %bs : tensor<128xi32>
        %neg = arith.subi %bs, %r : tensor<128xi32>
        %times4 = arith.muli %r, %c4 : tensor<128xi32>
        %times1 = arith.muli %c1, %offs : tensor<128xi32>
        %ms = tt.splat %m : i32 -> tensor<128xi32>
        %scaled = arith.muli %ms, %c4 : tensor<128xi32>
        %k = arith.addi %c4, %c1 : tensor<128xi32>
        """,
        """
        %twice: contiguity=[1] divisibility=[2] constancy=[1]
        %back: contiguity=[128] divisibility=[128] constancy=[1]
        %neg: contiguity=[1] divisibility=[1] constancy=[1]
        %times4: contiguity=[1] divisibility=[4] constancy=[1]
        %times1: contiguity=[128] divisibility=[128] constancy=[1]
        %scaled: contiguity=[1] divisibility=[4] constancy=[128]
        %k: contiguity=[1] divisibility=[1] constancy=[128] constant=5
        """,
        ARGS,
    )


def test_shifts_div_rem_by_constants() -> None:
    check(
        PROLOGUE
        + """
        %c2 = arith.constant dense<2> : tensor<128xi32>
        %c16 = arith.constant dense<16> : tensor<128xi32>
        %ns = tt.splat %n : i32 -> tensor<128xi32>
        %shl = arith.shli %bs, %c2 : tensor<128xi32>
        %shr = arith.shrsi %bs, %c2 : tensor<128xi32>
        %quo = arith.divsi %r, %c16 : tensor<128xi32>
        %qs = arith.divsi %bs, %c16 : tensor<128xi32>
        %rem = arith.remsi %offs, %c16 : tensor<128xi32>
        %wrap = arith.remsi %offs, %ns : tensor<128xi32>
        """,
        """
        %shl: contiguity=[1] divisibility=[512] constancy=[128]
        %shr: contiguity=[1] divisibility=[32] constancy=[128]
        %quo: contiguity=[1] divisibility=[1] constancy=[16]
        %qs: contiguity=[1] divisibility=[8] constancy=[128]
        %rem: contiguity=[16] divisibility=[16] constancy=[1]
        %wrap: contiguity=[16] divisibility=[16] constancy=[1]
        """,
        ARGS,
    )


def test_compare_mask_runs() -> None:
    """`offs < n` is constant over runs of gcd(contiguity(offs), divisibility(offs), divisibility(n))."""
    check(
        PROLOGUE
        + """
        %ns = tt.splat %n : i32 -> tensor<128xi32>
        %mask = arith.cmpi slt, %offs, %ns : tensor<128xi32>
        %ms = tt.splat %m : i32 -> tensor<128xi32>
        %ragged = arith.cmpi slt, %offs, %ms : tensor<128xi32>
        %flip = arith.cmpi sgt, %ns, %offs : tensor<128xi32>
        %eq = arith.cmpi eq, %offs, %ns : tensor<128xi32>
        %both = arith.andi %mask, %flip : tensor<128xi1>
        """,
        """
        %mask: contiguity=[1] divisibility=[1] constancy=[16]
        %ragged: contiguity=[1] divisibility=[1] constancy=[1]
        %flip: contiguity=[1] divisibility=[1] constancy=[16]
        %eq: contiguity=[1] divisibility=[1] constancy=[1]
        %both: contiguity=[1] divisibility=[1] constancy=[16]
        """,
        ARGS,
    )


def test_shapes_expand_broadcast_reshape_trans() -> None:
    check(
        """
        %rm = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
        %rn = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
        %col = tt.expand_dims %rm {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
        %row = tt.expand_dims %rn {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
        %ms = tt.splat %m : i32 -> tensor<16x1xi32>
        %colm = arith.muli %col, %ms : tensor<16x1xi32>
        %cb = tt.broadcast %colm : tensor<16x1xi32> -> tensor<16x32xi32>
        %rb = tt.broadcast %row : tensor<1x32xi32> -> tensor<16x32xi32>
        %off2 = arith.addi %cb, %rb : tensor<16x32xi32>
        %t = tt.trans %off2 {order = array<i32: 1, 0>} : tensor<16x32xi32> -> tensor<32x16xi32>
        %flat = tt.reshape %row : tensor<1x32xi32> -> tensor<32xi32>
        """,
        """
        %col: contiguity=[16, 1] divisibility=[max, 1] constancy=[1, 1]
        %row: contiguity=[1, 32] divisibility=[1, max] constancy=[1, 1]
        %colm: contiguity=[1, 1] divisibility=[1, 1] constancy=[1, 1]
        %cb: contiguity=[1, 1] divisibility=[1, 1] constancy=[1, 32]
        %rb: contiguity=[1, 32] divisibility=[1, max] constancy=[16, 1]
        %off2: contiguity=[1, 32] divisibility=[1, 1] constancy=[1, 1]
        %t: contiguity=[32, 1] divisibility=[1, 1] constancy=[1, 1]
        %flat: contiguity=[32] divisibility=[max] constancy=[1]
        """,
        ARGS,
    )


def test_select_and_hints() -> None:
    check(
        PROLOGUE
        + """
        %ns = tt.splat %n : i32 -> tensor<128xi32>
        %mask = arith.cmpi slt, %offs, %ns : tensor<128xi32>
        %c0 = arith.constant dense<0> : tensor<128xi32>
        %c64 = arith.constant dense<64> : tensor<128xi32>
        %up = arith.addi %offs, %c64 : tensor<128xi32>
        %sel = arith.select %mask, %offs, %up : tensor<128xi1>, tensor<128xi32>
        %sel0 = arith.select %mask, %offs, %c0 : tensor<128xi1>, tensor<128xi32>
        %true = arith.constant true
        %pick = arith.select %true, %offs, %c0 : tensor<128xi32>
        %ms = tt.splat %m : i32 -> tensor<128xi32>
        %hinted = arith.addi %ms, %r {tt.contiguity = dense<128> : tensor<1xi32>, tt.divisibility = dense<128> : tensor<1xi32>} : tensor<128xi32>
        """,
        """
        %sel: contiguity=[16] divisibility=[16] constancy=[1]
        %sel0: contiguity=[1] divisibility=[1] constancy=[1]
        %pick: contiguity=[128] divisibility=[128] constancy=[1]
        %hinted: contiguity=[128] divisibility=[128] constancy=[1]
        """,
        ARGS,
    )


LOOP_ARGS = "%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}, %m: i32"


def test_loop_fixpoint_keeps_what_every_iteration_keeps() -> None:
    """A pointer tile advanced by 64 elements stays contiguous and aligned; one advanced by `m` (unknown) stays
    contiguous but loses alignment; an offset that becomes `offs + 1` after the first trip loses both facts it had
    only on entry; the induction variable is a multiple of gcd(lb, step)."""
    check(
        """
        %c0 = arith.constant 0 : i32
        %c8 = arith.constant 8 : i32
        %c1 = arith.constant dense<1> : tensor<64xi32>
        %c64 = arith.constant dense<64> : tensor<64xi32>
        %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
        %ptrs = tt.addptr %ps, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
        %ms = tt.splat %m : i32 -> tensor<64xi32>
        %res:3 = scf.for %i = %c0 to %n step %c8 iter_args(%a = %ptrs, %b = %ptrs, %o = %r) -> (tensor<64x!tt.ptr<f32>>, tensor<64x!tt.ptr<f32>>, tensor<64xi32>)  : i32 {
          %a2 = tt.addptr %a, %c64 : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
          %b2 = tt.addptr %b, %ms : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
          %o2 = arith.addi %o, %c1 : tensor<64xi32>
          %o3 = arith.muli %o2, %c64 : tensor<64xi32>
          scf.yield %a2, %b2, %o3 : tensor<64x!tt.ptr<f32>>, tensor<64x!tt.ptr<f32>>, tensor<64xi32>
        }
        """,
        """
        %i: contiguity=[1] divisibility=[8] constancy=[1]
        %a: contiguity=[64] divisibility=[16] constancy=[1]
        %b: contiguity=[64] divisibility=[4] constancy=[1]
        %o: contiguity=[1] divisibility=[1] constancy=[1]
        %a2: contiguity=[64] divisibility=[16] constancy=[1]
        %o3: contiguity=[1] divisibility=[64] constancy=[1]
        %res#0: contiguity=[64] divisibility=[16] constancy=[1]
        %res#2: contiguity=[1] divisibility=[1] constancy=[1]
        """,
        LOOP_ARGS,
    )


def test_if_joins_both_branches() -> None:
    check(
        """
        %c0 = arith.constant 0 : i32
        %cond = arith.cmpi sgt, %m, %c0 : i32
        %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
        %c32 = arith.constant dense<32> : tensor<64xi32>
        %c64 = arith.constant dense<64> : tensor<64xi32>
        %x = scf.if %cond -> (tensor<64xi32>) {
          %y = arith.addi %r, %c32 : tensor<64xi32>
          scf.yield %y : tensor<64xi32>
        } else {
          %z = arith.addi %r, %c64 : tensor<64xi32>
          scf.yield %z : tensor<64xi32>
        }
        """,
        """
        %y: contiguity=[64] divisibility=[32] constancy=[1]
        %z: contiguity=[64] divisibility=[64] constancy=[1]
        %x: contiguity=[64] divisibility=[32] constancy=[1]
        """,
        LOOP_ARGS,
    )


def test_while_meets_entry_and_back_edge() -> None:
    """`i` starts at 0 and grows by 8: a multiple of 8 in both regions and after the loop."""
    check(
        """
        %c8 = arith.constant 8 : i32
        %c0 = arith.constant 0 : i32
        %res:2 = scf.while (%i = %c0, %j = %c0) : (i32, i32) -> (i32, i32) {
          %go = arith.cmpi slt, %i, %n : i32
          scf.condition(%go) %i, %j : i32, i32
        } do {
        ^bb0(%i2: i32, %j2: i32):
          %next = arith.addi %i2, %c8 : i32
          %one = arith.constant 1 : i32
          %j3 = arith.addi %j2, %one : i32
          scf.yield %next, %j3 : i32, i32
        }
        """,
        """
        %i: contiguity=[1] divisibility=[8] constancy=[1]
        %j: contiguity=[1] divisibility=[1] constancy=[1]
        %i2: contiguity=[1] divisibility=[8] constancy=[1]
        %next: contiguity=[1] divisibility=[8] constancy=[1]
        %res#0: contiguity=[1] divisibility=[8] constancy=[1]
        %res#1: contiguity=[1] divisibility=[1] constancy=[1]
        """,
        LOOP_ARGS,
    )


# ---- lattice laws, checked by brute force against the element values -----------------------------------------------


def _facts_of(xs: list[int]) -> AxisInfo:
    """The strongest facts that hold for a 1-D list of integers (power-of-two run lengths)."""
    n = len(xs)

    def runs(ok) -> int:
        k = n
        while k > 1 and not all(ok(xs[i : i + k]) for i in range(0, n, k)):
            k //= 2
        return k

    c = runs(lambda r: all(b == a + 1 for a, b in itertools.pairwise(r)))
    k = runs(lambda r: len(set(r)) == 1)
    d = MAX_DIV
    for i in range(0, n, c):
        d = min(d, pow2_divisor(xs[i]))
    return AxisInfo((c,), (d,), (k,))


def _holds(info: AxisInfo, xs: list[int]) -> bool:
    best = _facts_of(xs)
    return (
        info.contiguity[0] <= best.contiguity[0]
        and info.constancy[0] <= best.constancy[0]
        and all(pow2_divisor(xs[i]) % info.divisibility[0] == 0 for i in range(0, len(xs), info.contiguity[0]))
    )


@pytest.mark.parametrize("seed", range(40))
def test_add_and_compare_rules_are_sound_on_random_runs(seed: int) -> None:
    """Random offsets `base + range` and bounds: every fact the analysis claims holds for the actual values."""
    rng = random.Random(seed)
    n = 1 << rng.randint(2, 6)
    base, bound, start = rng.choice([0, 3, 16, 24, 64, 96]), rng.randint(0, 200), rng.choice([0, 1, 4, 8])
    bdiv = 16 if bound % 16 == 0 else 1
    args = f"%b: i32 {{tt.divisibility = {pow2_divisor(base) if base else 16} : i32}}, %n: i32" + (
        f" {{tt.divisibility = {bdiv} : i32}}" if bdiv > 1 else ""
    )
    body = f"""
    %r = tt.make_range {{end = {start + n} : i32, start = {start} : i32}} : tensor<{n}xi32>
    %bs = tt.splat %b : i32 -> tensor<{n}xi32>
    %offs = arith.addi %bs, %r : tensor<{n}xi32>
    %ns = tt.splat %n : i32 -> tensor<{n}xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<{n}xi32>
    """
    src = f"module {{\n  tt.func public @k({args}) {{\n{textwrap.indent(textwrap.dedent(body), '    ')}\n    tt.return\n  }}\n}}\n"
    func = parse_ttir(src).ops[0]
    info = analyze(func)
    vals = {a.name: a for b in func.regions[0].blocks for a in b.args}
    res = {op.result.name: op.result for op in func.body.ops if op.results}
    offs = [base + start + i for i in range(n)]
    mask = [int(o < bound) for o in offs]
    assert _holds(info[res["offs"]], offs)
    assert _holds(AxisInfo((1,), (1,), info[res["mask"]].constancy), mask)
    assert info[vals["b"]].divisibility[0] <= pow2_divisor(base)


def test_join_is_the_meet_of_both() -> None:
    a = AxisInfo((64,), (64,), (1,))
    b = AxisInfo((16,), (32,), (1,))
    assert join(a, b) == AxisInfo((16,), (16,), (1,))
    assert join(AxisInfo.of_constant((4,), 8), AxisInfo.of_constant((4,), 8)).constant == 8
    assert join(AxisInfo.of_constant((4,), 8), AxisInfo.of_constant((4,), 16)).constant is None


# ---- real kernels: Triton's TTIR of tutorial 01 and tutorial 03 as a launch specializes them ------------------------


def _tutorial_ttir(fn, sig: dict[str, str], constexprs: dict, aligned: list[int]) -> object:
    from ttir_corpus import _e, ttir_text

    entry = _e(fn, sig, constexprs, attrs={(i,): [["tt.divisibility", 16]] for i in aligned})
    return parse_ttir(ttir_text(entry)).ops[0]


def _memory_ops(func) -> list:
    from triton_backend_sdk.ir import ops as O

    return [op for op in func.walk() if isinstance(op, (O.Load, O.Store))]


def test_tutorial_01_vector_add() -> None:
    """Aligned pointers, n % 16 == 0: every access is one run of BLOCK pointers aligned to 16 bytes, masks constant
    over runs of 16; with n unaligned the pointers stay proven but the masks do not."""
    from triton_backend_sdk.conformance.cases.tutorials import add_kernel

    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}
    func = _tutorial_ttir(add_kernel, sig, {"BLOCK_SIZE": 1024}, [0, 1, 2, 3])
    info = analyze(func)
    ops = _memory_ops(func)
    assert len(ops) == 3
    for op in ops:
        assert str(info[op.ptr]) == "contiguity=[1024] divisibility=[16] constancy=[1]"
        assert str(info[op.mask]) == "contiguity=[1] divisibility=[1] constancy=[16]"
        assert info.vector_run(op.ptr, op.mask, 4) == (True, True, True)
    func = _tutorial_ttir(add_kernel, sig, {"BLOCK_SIZE": 1024}, [0, 2])
    info = analyze(func)
    x, y, out = _memory_ops(func)
    assert info.vector_run(x.ptr, x.mask, 4) == (True, True, False)
    assert info.vector_run(y.ptr, y.mask, 4) == (True, False, False)
    assert info.vector_run(out.ptr, out.mask, 4) == (True, True, False)


def test_tutorial_03_matmul() -> None:
    """The loop-carried `a_ptrs`/`b_ptrs` keep their rows contiguous through the fixed point; `% N` limits b's runs
    to 16 (N % 16 == 0); the k-masks are constant over 16 columns, the store's over 16."""
    from triton_backend_sdk.conformance.cases.tutorials import matmul_kernel

    names = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn"]
    names += ["stride_cm", "stride_cn"]
    sig = {k: ("*fp16" if k.endswith("_ptr") else "i32") for k in names}
    ones = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1}
    for k in ones:
        del sig[k]
    consts = dict(ones, BLOCK_SIZE_M=32, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=8, ACTIVATION="")
    aligned = [i for i, k in enumerate(names) if k not in ones]  # a launch with 16-aligned tensors and sizes
    func = _tutorial_ttir(matmul_kernel.fn, {k: sig.get(k, "constexpr") for k in names}, consts, aligned)
    info = analyze(func)
    a, b, c = _memory_ops(func)
    assert str(info[a.ptr]) == "contiguity=[1, 32] divisibility=[2, 16] constancy=[1, 1]"
    assert str(info[b.ptr]) == "contiguity=[1, 16] divisibility=[2, 16] constancy=[1, 1]"
    assert info[a.mask].constancy == (32, 16) and info[b.mask].constancy[1] == 64
    assert str(info[c.ptr]) == "contiguity=[1, 64] divisibility=[2, 16] constancy=[1, 1]"
    assert info[c.mask].constancy[1] == 16
