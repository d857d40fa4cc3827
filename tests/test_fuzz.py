"""Differential fuzzing (triton_backend_sdk.fuzz): the reference numerics, the generator, a CI-sized fuzz run on
every SDK backend that runs here, and one named regression test per bug the fuzzer found.

The CI slice: `CI_CASES` expression cases (kernels of `CI_EXPRS` cases each) of seed `CI_SEED` on cpu_ref and
opencl, compared with Triton's interpreter, 0 mismatches and 0 kernel failures expected; the constructs of the
known bugs below (sdk/fuzz/known.py) are left out, each pinned by its xfail(strict=True) test instead.
"""

from __future__ import annotations

import json
import os

import int_semantics_cases as C
import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.fuzz import dtypes as D
from triton_backend_sdk.fuzz import refnum as R
from triton_backend_sdk.fuzz.gen import generate
from triton_backend_sdk.fuzz.known import KNOWN
from triton_backend_sdk.fuzz.render import render

CI_SEED = 15
CI_CASES = 512
CI_EXPRS = 8


# --- the reference's numerics --------------------------------------------------------------------------------------
def test_reference_int_semantics_match_the_cuda_goldens() -> None:
    """refnum's x/0, INT_MIN/-1, shifts >= width and float -> int agree with what Triton's CUDA path computed on an
    H200 (tests/data/int_semantics_cuda.json) for every recorded case, without any SDK code."""
    with open(os.path.join(os.path.dirname(__file__), "data", "int_semantics_cuda.json")) as f:
        goldens = json.load(f)["cases"]
    for key in C.all_keys():
        kind, a, b = key
        if kind == "binary":
            x, y = (D.to_numpy(t, a) for t in C.binary_case(b, a))
            if b in ("div", "rem"):
                out, dst = R.divide(x, y, a, b == "rem"), a
            else:
                out, dst = R.shift(x, y, a, "shl" if b == "shl" else "ashr" if D.is_signed(a) else "lshr"), a
        else:
            out, dst = R.float_to_int(D.to_numpy(C.float_inputs(a), a), a, b), b
        assert C.int_values(D.from_numpy(out, dst), dst) == goldens[C.key_name(key)], key


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float8e4nv", "float8e5"])
def test_reference_rounding_matches_torch(name: str) -> None:
    """One rounding of f32 values to each narrow format, nearest even, as torch rounds (in range: torch gives NaN
    or inf where the SDK's fp8 saturates)."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(20000) * 10.0 ** rng.integers(-12, 8, 20000)).astype(np.float32)
    mine = R.decode(R.convert_float(x, "float32", name), name)
    theirs = torch.from_numpy(x).to(D.TORCH[name]).to(torch.float64).numpy()
    inside = np.abs(x) <= D.FORMATS[name].max
    np.testing.assert_array_equal(mine[inside], theirs[inside])
    assert (np.abs(mine[~inside]) == (np.inf if name in ("float16", "bfloat16") else D.FORMATS[name].max)).all()


def test_reference_exact_int64_conversion() -> None:
    """int64 -> f32 rounds the exact integer once (not through a double)."""
    v = np.array([(1 << 62) + (1 << 38) + 1, -((1 << 53) + 1), (1 << 63) - 1], dtype=np.int64)
    got = R.decode(R.int_to_float(v, "int64", "float32"), "float32")
    assert got.tolist() == [float(np.float32(2.0**62 + 2.0**39)), -(2.0**53), 2.0**63]


# --- the generator -------------------------------------------------------------------------------------------------
def test_generator_is_deterministic_and_renders_python() -> None:
    for k in range(20):
        a, b = generate(3, k), generate(3, k)
        assert a.to_json() == b.to_json()
        compile(render(a), f"k{k}.py", "exec")
    assert generate(3, 0).to_json() != generate(4, 0).to_json()


def test_generator_avoids_known_constructs() -> None:
    from triton_backend_sdk.fuzz.known import matching

    for k in range(60):
        spec = generate(1, k, avoid=KNOWN)
        for b in ("cpu_ref", "opencl"):
            assert not matching(spec, b, None), (k, b)


def test_generator_keeps_a_constant_dividend_from_dividing_by_zero() -> None:
    """fuzz seed 300 kernel 278: `0 // x2` is folded to 0 by Triton's TTIR canonicalizer, so a divisor that may be 0
    has no defined result there; the generator ors it with 1 (a load divisor of a loaded dividend stays as it is)."""
    from triton_backend_sdk.fuzz.gen import Generator
    from triton_backend_sdk.fuzz.spec import Node

    g = Generator(0, "k")
    zero, x = Node("lit", "int32", attr={"value": 0}), Node("load", "int32", attr={"name": "x2"})
    b = g.defined_operand(zero, x, "//", "int32")
    assert (b.op, b.attr.get("sym"), b.args[1].attr["value"]) == ("bin", "|", 1)
    y = Node("load", "int32", attr={"name": "x3"})
    assert g.defined_operand(x, y, "//", "int32") is y
    # seed 303 kernel 1087: `(x0 % 1) // x1` is `0 // x1` to the compiler, folded to 0 where x1 is 0
    folds_to_zero = Node("bin", "int32", [x, Node("lit", "int32", attr={"value": 1})], {"sym": "%"})
    b = g.defined_operand(folds_to_zero, y, "//", "int32")
    assert (b.op, b.attr.get("sym"), b.args[0]) == ("bin", "|", y)


def test_generator_gives_fmod_exact_operands_only() -> None:
    """fuzz seed 304 kernel 113: `bf16(sum(x)) % -2.75` with a sum of ~1e10 (bf16 ulp 2^26) is any multiple of 0.25
    in [0, 2.75) depending on the summation order; the perturbed reference runs gave 2.0-2.5, both backends 0.0.
    fmod's operands are now expressions every implementation rounds the same way."""
    from triton_backend_sdk.fuzz.gen import is_approx

    fmods = 0
    for k in range(300):
        for e in generate(304, k).exprs:
            for n in e.node.walk():
                if n.op == "div" and n.attr["sym"] == "%":
                    fmods += 1
                    assert not any(is_approx(a) for a in n.args), (k, n)
    assert fmods > 20


def test_reference_runs_move_chained_approximations_in_opposite_directions() -> None:
    """fuzz seed 300 kernel 164: `rsqrt(sin(x)) - x` was 2 ulp off on both backends, inside what the OpenCL bounds
    allow, because the all-up and all-down runs cancel in a decreasing function of an approximation; runs 3 and 4
    alternate the direction per result, so one of them moves sin down and rsqrt up."""
    from triton_backend_sdk.fuzz import interp_ref as R

    seen = set()
    for run in (3, 4):
        R.set_run(run)
        seen.add((R._signs((1,)), R._signs((1,))))
    assert seen == {(1.0, -1.0), (-1.0, 1.0)}
    R.set_run(0)


def test_reference_scan_and_single_sum_pass_their_first_element_through() -> None:
    """fuzz seed 301 kernel 110: `tl.cumsum` of e5m2 whose first element is -inf; a scan's first output is its input
    (no addition rounds it), so -inf stays -inf where the reference had rounded it to the saturated -57344, and so
    does a sum of one element. Later elements are additions and saturate."""
    from triton.runtime import interpreter as I
    from triton_backend_sdk.fuzz import interp_ref

    def fp8(values: np.ndarray) -> tl.core.tensor:
        return tl.core.tensor(I.TensorHandle(R.encode(values, "float8e5"), tl.float8e5), tl.float8e5)

    x = np.array([-np.inf, 1.75, 2.0, 4.0])
    scan = interp_ref._cumsum(None)(I.ScanOps(0, tl.standard._sum_combine, False), fp8(x))[0]
    assert R.decode(scan.handle.data, "float8e5").tolist() == [-np.inf, -57344.0, -57344.0, -57344.0]
    one = interp_ref._sum(None)(I.ReduceOps(1, tl.standard._sum_combine, False), fp8(x[:1].reshape(1, 1)))
    assert R.decode(one.handle.data, "float8e5").tolist() == [-np.inf]


def test_reference_dot_allows_what_underflowing_products_lose() -> None:
    """fuzz seed 306 kernel 17: a dot of normal floats with subnormals (uint32 bits read as fp32) was 2 subnormal
    ulps off the f64 reference on both backends: each product rounds to the subnormal grid, an absolute error the
    relative bound K·eps·Σ|a·b| misses. The perturbed runs now move a dot by K·(eps·Σ|a·b| + tiny)."""
    from triton.runtime import interpreter as I
    from triton_backend_sdk.fuzz import interp_ref

    k = 16
    g = np.random.default_rng(306)
    a = g.standard_normal((4, k)).astype(np.float32)
    b = (g.integers(1, 400, (k, 4)).astype(np.uint32)).view(np.float32)  # subnormals
    exact = a.astype(np.float64) @ b.astype(np.float64)
    f32 = np.zeros((4, 4), np.float32)
    for i in range(k):  # what a backend may compute: products rounded to f32, summed in f32
        f32 = f32 + (a[:, i : i + 1] * b[i : i + 1, :])
    assert np.abs(f32 - exact).max() > 0, "the products must lose something to the subnormal grid"

    def run(n: int) -> np.ndarray:
        interp_ref.set_run(n)
        h = [I.TensorHandle(x, tl.float32) for x in (a, b, np.zeros((4, 4), np.float32))]
        return interp_ref._dot(None, *h).data.astype(np.float64)

    runs = np.stack([run(n) for n in range(3)])
    interp_ref.set_run(0)
    lo, hi = runs.min(0), runs.max(0)
    assert ((f32 >= lo - (hi - lo)) & (f32 <= hi + (hi - lo))).all()


def test_reference_min_max_of_opposite_zeros_is_either_zero() -> None:
    """fuzz seed 308 kernel 774: rsqrt(min(-0, +0)) was +inf in the reference and -inf on cpu_ref; minnum/maxnum of
    opposite zeros may return either (LLVM, IEEE minNum), so the perturbed runs give such a result both signs."""
    from triton.runtime import interpreter as I
    from triton_backend_sdk.fuzz import interp_ref

    interp_ref.install()
    a = I.TensorHandle(np.array([-0.0, 1.0, 0.0], np.float32), tl.float32)
    b = I.TensorHandle(np.array([0.0, 2.0, 0.0], np.float32), tl.float32)
    builder = I.InterpreterBuilder()
    signs = set()
    for run in (1, 2):
        interp_ref.set_run(run)
        r = builder.create_minnumf(a, b).data
        signs.add(bool(np.signbit(r[0])))
        assert r[1] == 1.0 and not np.signbit(r[2]), "only opposite zeros are free"
    column = tl.core.tensor(I.TensorHandle(np.array([[-0.0], [0.0], [-3.0]], np.float32), tl.float32), tl.float32)
    reduced = set()
    for run in (1, 2):
        interp_ref.set_run(run)
        m = I.ReduceOps.min_max(I.ReduceOps(0, tl.standard._elementwise_max, False), column, np.nanmax)
        reduced.add(bool(np.signbit(m.handle.data[0])))
    interp_ref.set_run(0)
    assert signs == {True, False} and reduced == {True, False}


def test_reference_max_ignores_a_signaling_nan() -> None:
    """fuzz seed 308 kernel 1235: tl.max over a column holding an sNaN, -inf and +inf was 0.0 in the reference
    (numpy's nanmax on AVX-512) and +inf on both backends (maxnum ignores a NaN, signaling or not)."""
    from triton.runtime import interpreter as I
    from triton_backend_sdk.fuzz import interp_ref

    interp_ref.install()
    col = np.array([-0.0, -1.75, 1.0, np.inf, -7.5e-4, -np.inf, 0.0], np.float32)
    col = np.concatenate([col, np.array([0x7F98D923], np.uint32).view(np.float32)]).reshape(-1, 1)
    x = tl.core.tensor(I.TensorHandle(col, tl.float32), tl.float32)
    for run in range(3):
        interp_ref.set_run(run)
        m = I.ReduceOps.min_max(I.ReduceOps(0, tl.standard._elementwise_max, False), x, np.nanmax)
        assert m.handle.data.tolist() == [np.inf], run
    flat = tl.core.tensor(I.TensorHandle(col.reshape(-1), tl.float32), tl.block_type(tl.float32, [col.size]))
    whole = I.ReduceOps.min_max(I.ReduceOps(0, tl.standard._elementwise_max, False), flat, np.nanmax)
    assert not whole.type.is_block() and whole.handle.data.tolist() == [np.inf], "a full reduction stays a scalar"
    interp_ref.set_run(0)


def test_reference_narrow_conversion_of_a_moved_out_of_range_value_is_ill_conditioned() -> None:
    """fuzz seed 311 kernel 587: 39 // int8(fp16 sum) where the sum is 23328 or 23344 by summation order: int8 (the
    low byte of the saturated int16) 32 or 48, quotient 1 or 0. The perturbed runs moved the sum to 23504 and 23184,
    whose bytes (-48, -112) gave 0 again: the byte is not monotonic in its source, so a moved out-of-range source
    now gets another byte in each run; an in-range or unmoved one keeps its exact conversion."""
    from triton.runtime import interpreter as I
    from triton_backend_sdk.fuzz import interp_ref

    interp_ref.install()
    builder = I.InterpreterBuilder()

    def convert(values: list[float]) -> list[int]:
        h = I.TensorHandle(np.array(values, np.float16), tl.float16)
        return builder.create_fp_to_si(h, tl.int8).data.tolist()

    interp_ref.set_run(0)
    exact = convert([23344.0, 23344.0, 5.0])
    seen = []
    for run in (1, 2, 3):
        interp_ref.set_run(run)
        seen.append(convert([23504.0, 23344.0, 5.0]))
    interp_ref.set_run(0)
    assert exact == [48, 48, 5]
    assert len({r[0] for r in seen} | {exact[0]}) >= 3, seen  # moved and out of range: each run another byte
    assert all(r[1:] == [48, 5] for r in seen), seen  # unmoved, or in range: exact


def test_reference_saturating_sum_with_an_infinity_is_ill_conditioned() -> None:
    """fuzz seed 308 kernel 902: an e5m2 sum of +inf, -inf and finite terms is NaN exactly, but each fp8 addition
    is narrowed with satfinite (the CUDA path too), so an order that narrows +inf to +57344 first ends finite
    (cpu_ref: -57344). The perturbed runs now disagree on NaN there, so the element is not compared."""
    from triton.runtime import interpreter as I
    from triton_backend_sdk.fuzz import interp_ref

    x = np.array([[512.0, np.inf, -0.1875, 12288.0, -np.inf, 1536.0]]).T
    fp8 = tl.core.tensor(I.TensorHandle(R.encode(x, "float8e5"), tl.float8e5), tl.float8e5)
    runs = []
    for run in range(3):
        interp_ref.set_run(run)
        s = interp_ref._sum(None)(I.ReduceOps(0, tl.standard._sum_combine, False), fp8)
        runs.append(float(R.decode(s.handle.data, "float8e5")[0]))
    interp_ref.set_run(0)
    assert np.isnan(runs[0]) and np.isnan(runs).any() and not np.isnan(runs).all(), runs


# --- comparison and crash isolation -------------------------------------------------------------------------------
def _guarded(values: list[float], dtype: str = "float32") -> torch.Tensor:
    from triton_backend_sdk.fuzz.inputs import GUARD, SENTINEL_BYTE

    t = torch.full(((len(values) + 2 * GUARD) * 4,), SENTINEL_BYTE, dtype=torch.uint8).view(D.TORCH[dtype])
    t[GUARD : GUARD + len(values)] = torch.tensor(values, dtype=D.TORCH[dtype])
    return t


def test_compare_is_exact_for_exact_ops_and_uses_the_runs_spread_otherwise() -> None:
    from triton_backend_sdk.fuzz.compare import compare
    from triton_backend_sdk.fuzz.inputs import GUARD
    from triton_backend_sdk.fuzz.spec import Expr, Node

    load = Node("load", "float32", attr={"name": "x0"})
    exact = Expr("elementwise", Node("bin", "float32", [load, load], {"sym": "+"}))
    approx = Expr("elementwise", Node("math", "float32", [load], {"fn": "exp"}))
    one_ulp = float(np.nextafter(np.float32(1.5), np.float32(2)))
    assert compare(exact, [_guarded([1.5, 2.0])], _guarded([1.5, 2.0])).status == "ok"
    res = compare(exact, [_guarded([1.5, 2.0])], _guarded([one_ulp, 2.0]))
    assert (res.status, res.kind, res.bad) == ("mismatch", "float", 1)
    runs = [_guarded([1.5, 2.0]), _guarded([one_ulp, 2.0]), _guarded([1.5, 2.0])]
    assert compare(approx, runs, _guarded([one_ulp, 2.0])).status == "ok"
    assert compare(approx, runs, _guarded([1.75, 2.0])).kind == "float-approx"
    nan_or_not = [_guarded([float("nan"), 2.0]), _guarded([1.0, 2.0])]
    res = compare(approx, nan_or_not, _guarded([5.0, 2.0]))
    assert (res.status, res.skipped) == ("ok", 1)  # an element the runs disagree on is ill-conditioned
    written_past = _guarded([1.5, 2.0])
    written_past[GUARD + 2] = 0.0
    assert compare(exact, [_guarded([1.5, 2.0])], written_past).kind == "guard"


def test_a_crashing_worker_is_reported_and_replaced(tmp_path) -> None:
    from triton_backend_sdk.fuzz.pool import Worker

    crash = tmp_path / "crash.py"
    crash.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    w = Worker("interpreter", str(tmp_path / "w.log"))
    try:
        r = w.run({"id": 0, "file": str(crash), "result": str(tmp_path / "r.pt")}, timeout=120)
        assert r.status == "crash" and r.info["returncode"] == -11
        r = w.run({"id": 1, "file": str(tmp_path / "missing.py"), "result": str(tmp_path / "r.pt")}, timeout=120)
        assert r.status == "error" and r.info["phase"] == "load"  # a fresh worker answered
    finally:
        w.close()


# --- the CI slice --------------------------------------------------------------------------------------------------
def _runnable() -> list[str]:
    from conftest import _unavailable

    return [b for b in ("cpu_ref", "opencl") if _unavailable(b) is None]


@pytest.mark.timeout(1800)
def test_fuzz_ci_slice(tmp_path) -> None:
    from triton_backend_sdk.fuzz.runner import Fuzzer

    backends = _runnable()
    if not backends:
        pytest.skip("no SDK backend runs here")
    fz = Fuzzer(
        seed=CI_SEED,
        backends=backends,
        out=str(tmp_path),
        exprs_per_kernel=CI_EXPRS,
        avoid_known=True,
        minimize_budget=60,
        max_minimize=2,
    )
    report = fz.run(CI_CASES)
    print("\n".join(report.summary()))
    assert report.cases >= 500
    assert not report.invalid, report.invalid[:2]
    assert not report.failures, "\n".join(report.summary())
    for b in backends:
        assert report.counts[(b, "ok")] + report.counts[(b, "unchecked")] == report.cases


# --- regression tests: one per bug the fuzzer found ----------------------------------------------------------------
def _expect_known(request: pytest.FixtureRequest, backend: str, test: str) -> None:
    bug = next(k for k in KNOWN if k.test == test)
    backend = request.node.callspec.params.get("backend", backend)  # a variant: "opencl@wg128"
    if backend in bug.backends:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"{backend}: {bug.summary}"))


@triton.jit
def _fp8_constants(x, o, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(x + r)
    tl.store(o + r, (a >= 0.1).to(tl.float32))
    tl.store(o + N + r, (a + 0.1).to(tl.float32))
    tl.store(o + 2 * N + r, tl.full((N,), 0.1, a.dtype).to(tl.float32))


@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2])
def test_fuzz_regression_fp8_inexact_float_constant(backend, dtype) -> None:
    """fuzz seed 2 kernel 1 (`x4 >= 0.1`), seed 5 kernel 4 (`-7.25 + x.to(tl.float8e5)`): a float constant an fp8
    format does not hold exactly; 0.1 is the fp8 0.1015625 (e4m3) / 0.09375 (e5m2)."""
    x = torch.tensor([0.0, 0.125, 0.0625, -1.0]).to(dtype)
    o = torch.empty(12)
    _fp8_constants[(1,)](x, o, N=4)
    c = torch.tensor(0.1).to(dtype).float()
    assert o.tolist() == [0.0, 1.0, 0.0, 0.0] + (x.float() + c).to(dtype).float().tolist() + [c.item()] * 4


@triton.jit
def _dot_self(a, o, M: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rk = tl.arange(0, K)
    x = tl.load(a + rm[:, None] * K + rk[None, :])
    tl.store(o + rm[:, None] * M + rm[None, :], tl.dot(x, tl.trans(x), input_precision="ieee"))


@pytest.mark.parametrize("shape", [(1, 4), (1, 1)])
def test_fuzz_regression_dot_with_one_row(backend, shape) -> None:
    """fuzz seed 1 kernel 4 / seed 2 kernel 10: tl.dot of a [1, K] tile with its transpose."""
    a = torch.arange(1, shape[0] * shape[1] + 1, dtype=torch.float32).view(shape)
    o = torch.empty(shape[0], shape[0])
    _dot_self[(1,)](a, o, M=shape[0], K=shape[1])
    assert torch.equal(o, a @ a.t())


@triton.jit
def _minmax_promoted(x, y, o, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(x + r)
    b = tl.load(y + r)
    tl.store(o + r, tl.maximum(a ^ 3, b))
    tl.store(o + N + r, tl.minimum(a, ~b))


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16])
def test_fuzz_regression_narrow_signed_minmax_of_promoted_operand(backend, dtype) -> None:
    """fuzz seed 3 kernel 25 (`tl.maximum(x4, x5 ^ 32767)` on int16, minimized), seed 5 kernel 48 (`x2 % 32767`)."""
    x = torch.tensor([1, -2, 100, 7], dtype=dtype)
    y = torch.tensor([2, 5, -9, 7], dtype=dtype)
    o = torch.empty(8, dtype=dtype)
    _minmax_promoted[(1,)](x, y, o, N=4)
    assert o.tolist() == torch.maximum(x ^ 3, y).tolist() + torch.minimum(x, ~y).tolist()


@triton.jit
def _copy(x, o, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(o + r, tl.load(x + r))


def test_fuzz_regression_e5m2_infinity_loaded_and_stored(backend) -> None:
    """fuzz seed 100 kernel 91 (minimized to `tl.store(out0 + offs, x5, mask=mask)` of an e5m2 input)."""
    x = torch.tensor([0x7C, 0xFC, 0x3C, 0x7B], dtype=torch.uint8).view(torch.float8_e5m2)  # +inf -inf 1 57344
    o = torch.zeros_like(x)
    _copy[(1,)](x, o, N=4)
    assert o.view(torch.uint8).tolist() == [0x7C, 0xFC, 0x3C, 0x7B]


@triton.jit
def _abs_then(x, o, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.abs(tl.load(x + r))
    tl.store(o + r, a % 7)
    tl.store(o + N + r, (a < 0).to(o.dtype.element_ty))


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64])
def test_fuzz_regression_abs_of_int_min(backend, dtype) -> None:
    """fuzz seed 100 kernel 122 (minimized to `(tl.abs(x0) % 7).to(tl.uint32)` on int32): abs(INT_MIN) wraps to
    INT_MIN in Triton (as in torch), so it stays negative."""
    lo = torch.iinfo(dtype).min
    x = torch.tensor([lo, -9, 9, lo + 1], dtype=dtype)
    o = torch.empty(8, dtype=dtype)
    _abs_then[(1,)](x, o, N=4)
    a = torch.where(x == lo, x, x.abs())
    assert o.tolist() == torch.fmod(a, 7).tolist() + (a < 0).to(dtype).tolist()


@triton.jit
def _fma(x, y, z, o, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(o + r, tl.fma(tl.load(x + r), tl.load(y + r), tl.load(z + r)))


def test_fuzz_regression_bf16_fma_rounds_once(backend) -> None:
    """fuzz seed 4 kernel 0 (minimized to `tl.fma(x0, x0, x2)` on bf16): (-4.75)**2 = 22.5625 is the midpoint of
    the bf16 neighbours 22.5 and 22.625; the tiny addend puts the exact result above it, so fma rounds up."""
    x = torch.tensor([-4.75, -4.75], dtype=torch.bfloat16)
    z = torch.tensor([2.0**-66, 2.7e-9], dtype=torch.bfloat16)
    o = torch.empty(2, dtype=torch.bfloat16)
    _fma[(1,)](x, x, z, o, N=2)
    assert o.tolist() == [22.625, 22.625]


@triton.jit
def _reduce_computed_range(o, M, BM: tl.constexpr, OP: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    v = tl.where(rm < M, -((rm * 2 + -1).to(tl.float32)), 0)
    if OP == "min":
        r = tl.min(v, axis=0)
    elif OP == "max":
        r = tl.max(-v, axis=0)
    else:
        r = tl.sum(v, axis=0)
    tl.store(o + pid, r)


@pytest.mark.parametrize("op", ["min", "max", "sum"])
@pytest.mark.parametrize("block", [16, 64, 128, 256])
def test_fuzz_regression_reduce_of_a_computed_range(backend, op, block) -> None:
    """fuzz seed 300 kernel 44: `tl.min` of values computed from `pid * BM + tl.arange` (no load) over 64 or more
    elements gave the minimum of the first 48 of every 64 on cpu_ref at -O3 (LLVM 22 unrolled the reduction's lane
    loop inside its chunk loop, then the loop vectorizer dropped chunks); M = 288 leaves a ragged last program."""
    m = 288
    grid = triton.cdiv(m, block)
    o = torch.full((grid,), float("nan"))
    _reduce_computed_range[(grid,)](o, m, BM=block, OP=op)
    rm = torch.arange(grid * block).view(grid, block)
    v = torch.where(rm < m, -(rm * 2 - 1).float(), 0.0)
    want = {"min": v.min(1).values, "max": (-v).max(1).values, "sum": v.sum(1)}[op]
    torch.testing.assert_close(o, want, rtol=0, atol=0)


@triton.jit
def _fp16_bits(x, o, ob, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(x + r)
    tl.store(o + r, a)
    tl.store(ob + r, a.to(tl.int16, bitcast=True))


def test_fuzz_regression_fp16_signaling_nan_bits(backend) -> None:
    """fuzz seed 300 kernel 122: every fp16 bit pattern loaded, stored and bitcast to int16 comes back unchanged
    (data movement is bit-exact; opencl changed the 1,022 signaling-NaN patterns: the hardware widening it loads
    halves with sets their quiet bit)."""
    bits = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16)
    o, ob = torch.empty(65536, dtype=torch.float16), torch.empty_like(bits)
    _fp16_bits[(1,)](bits.view(torch.float16), o, ob, N=65536)
    assert torch.equal(o.view(torch.int16), bits) and torch.equal(ob, bits)


@triton.jit
def _e5m2_scan(x, o, os, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(x + r)
    tl.store(o + r, tl.cumsum(a, axis=0))
    tl.store(os + r, tl.sum(a[:, None], axis=1))


def test_fuzz_regression_e5m2_scan_keeps_a_leading_infinity(backend) -> None:
    """fuzz seed 301 kernel 110 (the reference's mistake, pinned on the backends): an e5m2 cumsum starting at -inf
    keeps it in the first element and saturates the additions after it; a one-element sum is its element."""
    x = torch.tensor([-float("inf"), 1.75, 2.0, 4.0]).to(torch.float8_e5m2)
    o, os_ = torch.empty_like(x), torch.empty_like(x)
    _e5m2_scan[(1,)](x, o, os_, N=4)
    assert o.float().tolist() == [-float("inf"), -57344.0, -57344.0, -57344.0]
    assert os_.float().tolist() == x.float().tolist()


@triton.jit
def _neg_abs(x, o, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(x + r)
    tl.store(o + r, -a)
    tl.store(o + N + r, tl.abs(a))


@pytest.mark.parametrize("dtype", [torch.float8_e5m2, torch.float8_e4m3fn])
def test_fuzz_regression_fp8_negation_is_a_sign_flip(backend, dtype) -> None:
    """fuzz seed 302 kernel 203 (`-x3` of e5m2): negation through f32 and back saturated +inf to -57344; `-x` and
    `abs(x)` change the sign bit only, for infinities, NaNs and zeros too."""
    bits = torch.tensor([0x7C, 0xFC, 0x3E, 0x80, 0x00, 0x7F, 0xFF, 0x01], dtype=torch.uint8)
    o = torch.zeros(16, dtype=torch.uint8)
    _neg_abs[(1,)](bits.view(dtype), o.view(dtype), N=8)
    assert o[:8].tolist() == (bits ^ 0x80).tolist() and o[8:].tolist() == (bits & 0x7F).tolist()


def test_sigterm_stops_a_run_with_its_report(tmp_path) -> None:
    """A fuzz run started in the background ignores SIGINT (the shell's doing): `kill PID` ends it as Ctrl-C does,
    with the kernels that ran counted, the report written and no minimizing first."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "triton_backend_sdk.cli", "fuzz", "--cases", "400", "--seed", "7"]
    cmd += ["--backends", "cpu_ref", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:
            if "kernels]" in line:
                break
        proc.send_signal(signal.SIGTERM)
        t = time.monotonic()
        stdout, _ = proc.communicate(timeout=300)
    finally:
        proc.kill()
    report = json.loads((out / "report.json").read_text())
    assert report["stopped"] == "interrupted", stdout
    assert 1 <= report["kernels"] < 50 and report["cases"] == 8 * report["kernels"]
    assert time.monotonic() - t < 120


@triton.jit
def _bf16_rem_to_fp16(x, o, M, BM: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    a = tl.load(x + rm, mask=rm < M)
    r = (a * a) % (a - (rm * 7 - 1).to(tl.bfloat16))
    tl.store(o + rm, r.to(tl.float16), mask=rm < M)


def test_fuzz_regression_bf16_remainder_narrowed_to_fp16(backend) -> None:
    """fuzz seed 303 kernel 792: `(bf16 % bf16).to(fp16)` is fptrunc(frem(fpext bfloat ...)) to half in TTIR; LLVM's
    InstCombine turned it into a bfloat -> half cast of equal widths, an assertion abort in llvmlite's LLVM that took
    the process down. cpu_ref widens bf16 through its bits."""
    m = 37
    g = torch.Generator().manual_seed(792)
    x = (torch.randn(m, generator=g) * 8).to(torch.bfloat16)
    o = torch.empty(m, dtype=torch.float16)
    _bf16_rem_to_fp16[(triton.cdiv(m, 16),)](x, o, m, BM=16)
    rm = torch.arange(m)
    num, den = (x * x).float(), (x - (rm * 7 - 1).to(torch.bfloat16)).float()
    torch.testing.assert_close(o, torch.fmod(num, den).to(torch.float16), rtol=0, atol=0, equal_nan=True)


@triton.jit
def _min_cols_argmin_rows(x2, x4, o, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    holes = mask & (((rm[:, None] + rn[None, :]) % 3) != 1)
    a = tl.load(x2 + rm[:, None] * N + rn[None, :], mask=holes, other=65504.0)
    b = tl.load(x4 + rm[:, None] * N + rn[None, :], mask=mask, other=-3)
    e1 = tl.min(tl.where(mask, a, 0), axis=0, keep_dims=True).to(tl.float32).to(tl.int64)
    e3 = tl.argmin(tl.where(mask, b, 0), axis=1, keep_dims=True).to(tl.int32).to(tl.int64)
    tl.store(o + rm[:, None] * N + rn[None, :], e1 & e3, mask=mask)


#: fuzz seed 303 kernel 1152's inputs for the rows of its second program (the first and last are copies of it)
_K1152_X2 = [-3.75, -0.00085, 1.5, 0.00055, 82.5, -9.6e-14, 193.0, 1.25]
_K1152_X4 = [-3, 6, -1445093518898725303, 0, -2263714567280558344, 1, -3, 6068998713670373405]


def test_fuzz_regression_two_reductions_along_different_axes(backend) -> None:
    """fuzz seed 303 kernel 1152 (minimized): a bf16 min along axis 0 and an int64 argmin along axis 1 of one tile.
    On opencl with PoCL's one work-item per program, rows whose minimum is in column 1 got index 0: the scratch area
    was a byte array cast to float and to long, and with the barriers between them gone (one work-item) PoCL's LLVM
    used C's aliasing rules to move a float store past the long stores to the same bytes. Now a union's members."""
    m, n, bm = 24, 2, 8
    x2 = torch.tensor([[-5.8125, v] for v in _K1152_X2] * 3, dtype=torch.bfloat16)
    x4 = torch.tensor([[-1, v] for v in _K1152_X4] * 3, dtype=torch.int64)
    o = torch.full((m, n), -99, dtype=torch.int64)
    _min_cols_argmin_rows[(m // bm,)](x2, x4, o, m, n, BM=bm, BN=4)
    rows = torch.arange(m)[:, None] + torch.arange(n)[None, :]
    a = torch.where(rows % 3 != 1, x2.float(), float(torch.tensor(65504.0).to(torch.bfloat16)))
    want = torch.empty_like(o)
    for p in range(m // bm):
        blk = slice(p * bm, (p + 1) * bm)
        e1 = torch.minimum(a[blk].min(0).values, torch.zeros(n)).to(torch.int64)  # columns 2, 3 are masked to 0
        padded = torch.cat([x4[blk], torch.zeros(bm, 2, dtype=torch.int64)], 1)
        e3 = torch.argmin(padded, 1)  # the first index among equal minima, as tl.argmin
        want[blk] = e1[None, :] & e3[:, None]
    assert o.tolist() == want.tolist()


@triton.jit
def _bf16_bits_and_neg_zero(x0, x2, x5, o, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    a = tl.load(x0 + rm[:, None] * N + rn[None, :], mask=mask, other=0.001)
    h = tl.load(x2 + rm[:, None] * N + rn[None, :], mask=mask)
    s = tl.load(x5 + rm[:, None] * N + rn[None, :], mask=mask, other=-32768)
    nonzero = a.to(tl.float16, bitcast=True).to(tl.int1)
    picked = tl.where(tl.full((BM, BN), -0.0, tl.bfloat16) == a, h, (rn[None, :] * 3).to(tl.float16))
    low = tl.min(tl.where(mask, s, 0), axis=1, keep_dims=True).to(tl.int32).to(tl.float16)
    tl.store(o + rm[:, None] * N + rn[None, :], tl.where(nonzero, picked, low), mask=mask)


@pytest.mark.parametrize("M,N,BM,BN", [(5, 1, 4, 2), (13, 7, 8, 8)])
def test_fuzz_regression_bf16_bits_as_fp16_and_a_compare_with_negative_zero(backend, M, N, BM, BN) -> None:
    """fuzz seed 305 kernel 826: a bf16 tile (masked, `other` 0.001) bitcast to fp16, and compared with a bf16 -0.0
    constant, aborted llvmlite's LLVM inside InstCombine (`ConstantInt type doesn't match the type implied by its
    value`), once for the bfloat -> half bitcast and once for the fcmp on bfloat; cpu_ref now bitcasts through i16
    and compares bf16 widened to f32 (exact)."""
    g = torch.Generator().manual_seed(826)
    x0 = (torch.randn(M, N, generator=g) * 4).to(torch.bfloat16)
    x0.view(-1)[::3] = -0.0
    x0.view(-1)[1::4] = 0.0
    x2 = torch.randn(M, N, generator=g).to(torch.float16)
    x5 = torch.randint(-32768, 32767, (M, N), generator=g, dtype=torch.int16)
    o = torch.empty(M, N, dtype=torch.float16)
    _bf16_bits_and_neg_zero[(triton.cdiv(M, BM),)](x0, x2, x5, o, M, N, BM=BM, BN=BN)
    nonzero = x0.view(torch.float16) != 0
    cols = (torch.arange(N) * 3).to(torch.float16).expand(M, N)
    picked = torch.where(x0 == 0, x2, cols)  # -0.0 == +0.0
    low = x5.min(dim=1, keepdim=True).values
    low = (low.clamp(max=0) if BN > N else low).to(torch.float16).expand(M, N)  # padding columns count as 0
    torch.testing.assert_close(o, torch.where(nonzero, picked, low), rtol=0, atol=0)


@triton.jit
def _column_max(x, o, M: tl.constexpr, N: tl.constexpr):
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    tl.store(o + rn, tl.max(tl.load(x + rm[:, None] * N + rn[None, :]), axis=0))


def test_fuzz_regression_max_over_a_signaling_nan(backend) -> None:
    """fuzz seed 308 kernel 1235 (the reference's fault, above): a max over a column holding a signaling NaN is
    the largest other value on every backend, as maxnum is on the CUDA path."""
    col = torch.tensor([-0.0, -1.75, 1.0, float("inf"), -7.5e-4, -float("inf"), 0.0, 2.0])
    col[7] = torch.tensor([0x7F98D923], dtype=torch.int32).view(torch.float32)
    x = torch.stack([col, col.flip(0)], 1).contiguous()
    o = torch.empty(2)
    _column_max[(1,)](x, o, M=8, N=2)
    assert o.tolist() == [float("inf"), float("inf")]


@triton.jit
def _int_to_half_and_scan(x, o, h, N: tl.constexpr):
    r = tl.arange(0, N)
    v = tl.load(x + r)
    zero = tl.full((N,), 0, tl.uint8).to(tl.bfloat16)
    tl.store(o + r, tl.cumsum(zero * v.to(tl.bfloat16) + v.to(tl.bfloat16), axis=0))
    tl.store(h + r, v.to(tl.float16))


@pytest.mark.parametrize("dtype", [torch.int16, torch.int32, torch.int64])
def test_fuzz_regression_int_to_bf16_then_cumsum(backend, dtype) -> None:
    """fuzz seed 311 kernel 509: a bf16 cumsum of `0 * int16.to(bf16)` aborted the process in llvmlite's LLVM
    (SelectionDAG: LLVM's own int -> bfloat conversion on x86); cpu_ref now converts through f32/f64 and rounds
    once. Each conversion is checked exactly (nearest even from the exact value), the scan within its bound."""
    vals = [3, -7, 1000, 255, 257, -32768 if dtype == torch.int16 else 16777217, 129, 32767]
    x = torch.tensor(vals, dtype=dtype)
    o = torch.empty(8, dtype=torch.bfloat16)
    h = torch.empty(8, dtype=torch.float16)
    _int_to_half_and_scan[(1,)](x, o, h, N=8)
    exact_bf16 = R.round_float(np.array(vals, dtype=np.float64), "bfloat16")
    exact_f16 = R.round_float(np.array(vals, dtype=np.float64), "float16")
    assert h.double().numpy().tolist() == exact_f16.tolist()
    prefix = np.cumsum(exact_bf16)
    bound = 7 * D.FORMATS["bfloat16"].eps * np.cumsum(np.abs(exact_bf16))
    assert (np.abs(o.double().numpy() - prefix) <= bound + 1e-9).all(), (o.tolist(), prefix.tolist())


@triton.jit
def _column_min_of_bf16(x, o, M, BM: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    mask = rm[:, None] < M
    v = tl.load(x + rm[:, None], mask=mask, other=3).to(tl.bfloat16)
    tl.store(o + pid + tl.arange(0, 1)[:, None], tl.min(tl.where(mask, v, 0), axis=0, keep_dims=True).to(tl.float32))


@triton.jit
def _loop_min_of_bf16(x, o, N: tl.constexpr):
    m = tl.load(x)
    for i in range(1, N):
        m = tl.minimum(m, tl.load(x + i).to(tl.bfloat16).to(tl.float32))
    tl.store(o, m)


def test_fuzz_regression_minnum_loop_keeps_its_remainder(backend) -> None:
    """fuzz seed 312 kernel 1202: a min over 16 rows of a uint16 column converted to bf16 lost rows 13-15 on
    cpu_ref: LLVM 22 vectorized the row loop's `llvm.minnum` recurrence with a NaN early exit whose middle block
    skipped the 3 remainder iterations; the same recurrence in a user loop of constant trip count aborted the process
    ("VPlan cost model and legacy cost model disagreed"). maxnum/minnum are now compares and selects on cpu_ref.
    Every position of the smallest value is tried."""
    for pos in range(16):
        x = torch.full((43,), 4, dtype=torch.int16)
        x[pos] = 0
        x[16 + pos] = 1
        o = torch.full((3,), float("nan"))
        _column_min_of_bf16[(3,)](x, o, 43, BM=16)
        assert o.tolist() == [0.0, 1.0, 0.0], (pos, o.tolist())
    for n in (15, 16, 17):
        for pos in range(n):
            x = torch.ones(n)
            x[pos] = -2.0
            o = torch.empty(1)
            _loop_min_of_bf16[(1,)](x, o, N=n)
            assert o.item() == -2.0, (n, pos)


@triton.jit
def _three_stores_under_one_mask(x1, x2, x3, x4, o_half, o_fp8, o_i8, M, s1, s3, BM: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    mask = (rm[:, None] < M) & (tl.arange(0, 1)[None, :] < 1)
    r = rm[:, None]
    a = tl.load(x1 + r * s1, mask=mask)
    b = tl.load(x2 + r, mask=mask, other=65504.0)
    c = tl.load(x3 + r * s3, mask=mask)
    d = tl.load(x4 + r, mask=mask, other=9.5367431640625e-07)
    tl.store(o_half + r, 100.0 + c.to(tl.float16) - d, mask=mask)
    e = tl.where(a >= -7.25, c.to(tl.float32).to(tl.float8e5), tl.full((BM, 1), 0.5, tl.float8e5))
    tl.store(o_fp8 + r, e * 1.5, mask=mask)
    f = c.to(tl.uint16).to(tl.bfloat16, bitcast=True) - a.to(tl.bfloat16)
    tl.store(o_i8 + r, (f <= b).to(tl.int8), mask=mask)


def test_fuzz_regression_masked_byte_store_keeps_its_mask(backend) -> None:
    """fuzz seed 315 kernel 399: an int8 store under the block's mask, beside two other stores under it, wrote zeros
    to the 7 rows past M (17 of 2x16) on cpu_ref. LLVM 22's x86 backend read 8 mask bytes as a 16-lane mask register
    and lost the `kmovb` that clears its upper half when the register allocator spilled it; the widened 16-byte store
    then used the next 8 rows' mask bits. Boolean tiles are now kept as 16-bit elements in cpu_ref's buffers."""
    torch.manual_seed(399)
    m = 17
    x1 = torch.randn(2 * m) * 8
    x2 = (torch.randn(m) * 4).to(torch.bfloat16)
    x3 = torch.randint(-128, 128, (2 * m,), dtype=torch.int8)
    x4 = torch.randn(m).to(torch.float16)
    guard = 8
    o_half = torch.zeros(m, dtype=torch.float16)
    o_fp8 = torch.zeros(m, dtype=torch.float8_e5m2)
    o_i8 = torch.full((m + 2 * guard,), -91, dtype=torch.int8)
    _three_stores_under_one_mask[(2,)](x1, x2, x3, x4, o_half, o_fp8, o_i8[guard:], m, 2, 2, BM=16)
    a, c = x1[::2], x3[::2]
    f = (c.to(torch.int16).view(torch.bfloat16).float() - a.to(torch.bfloat16).float()).to(torch.bfloat16)
    want = (f.float() <= x2.float()).to(torch.int8)
    assert o_i8[:guard].tolist() == [-91] * guard and o_i8[guard + m :].tolist() == [-91] * guard, o_i8.tolist()
    assert torch.equal(o_i8[guard : guard + m], want)
    assert torch.equal(o_half, 100.0 + c.to(torch.float16) - x4)


@triton.jit
def _unsigned_of_a_negative_row(out, M, N, BM: tl.constexpr, BN: tl.constexpr, WIDE: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    r = rm[:, None] * 1 + -1
    if WIDE == 2:
        v = r.to(tl.uint16).to(tl.float64)
    elif WIDE == 1:
        v = r.to(tl.uint64) / 3
    else:
        v = r.to(tl.int16).to(tl.uint32) / 3
    tl.store(out + rm[:, None] * N + rn[None, :], v.to(out.dtype.element_ty), mask=mask)


def test_fuzz_regression_uint64_of_a_sign_extended_value(backend) -> None:
    """fuzz seed 316 kernel 647: `(rm - 1).to(tl.uint64) / 3` gave (2^32 - 1) / 3 for row 0 on cpu_ref: LLVM 22's SLP
    vectorizer narrowed `uitofp (sext i32 to i64)` to `uitofp i32`. cpu_ref now converts unsigned integers to float
    without LLVM's uitofp i64. Its first form (halving every width) lost the low bit of a uint16 converted to float64
    (fuzz seed 317 kernel 15: 65531 -> 65530); narrower values are now widened with zeros and converted exactly."""
    m, n = 14, 5
    rows = np.repeat(np.arange(m, dtype=np.int64)[:, None] - 1, n, axis=1)
    wants = {
        1: (rows.astype(np.uint64).astype(np.float32) / np.float32(3)).astype(np.uint64),
        0: (rows.astype(np.int16).astype(np.uint32).astype(np.float32) / np.float32(3)).astype(np.int64),
        2: rows.astype(np.uint16).astype(np.float64),
    }
    dtypes = {1: torch.uint64, 0: torch.int64, 2: torch.float64}
    for wide, want in wants.items():
        out = torch.zeros(m, n, dtype=dtypes[wide])
        _unsigned_of_a_negative_row[(1,)](out, m, n, BM=16, BN=16, WIDE=wide)
        assert out.tolist() == want.tolist(), (wide, out[:2].tolist())
