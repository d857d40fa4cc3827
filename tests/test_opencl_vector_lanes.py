"""Row walks on one work-item (a CPU device) fold a reduction whose combine is one op the language spells on vectors
into vector partials (backends/opencl/render/vector_combine.py): golden OpenCL C for the stored-row and chunk-array
forms and for combines that keep scalar lane arrays, and results on this machine's OpenCL device against torch for
every combine in the table, fp32, fp64, int32 and int64, ragged rows included."""

from __future__ import annotations

import re

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from test_opencl_render import LOAD_1024, render

CPU = frozenset({"device_type_cpu", "cl_khr_fp64"})


def _reduce(op: str, ty: str = "f32", shape: str = "1024xf32", result: str = "f32", src: str = "%v") -> str:
    """`%z`: the reduction of `src` along its last axis with combine `op`."""
    return f"""
    %z = "tt.reduce"({src}) <{{axis = {shape.count("x") - 1} : i32}}> ({{
    ^bb0(%a: {ty}, %b: {ty}):
      %c = {op} %a, %b : {ty}
      tt.reduce.return %c : {ty}
    }}) : (tensor<{shape}>) -> {result}
"""


def test_a_stored_row_folds_into_vector_partials_read_back_from_its_register_tile():
    """Softmax's shape: the row is stored (read again after its max) and its max is two float16 partials, each
    updated from the register tile a chunk at a time, then one vector combine and a scalar fold of 16 components."""
    body = (
        LOAD_1024
        + _reduce("arith.maxnumf")
        + """
    %zs = tt.splat %z : f32 -> tensor<1024xf32>
    %d = arith.subf %v, %zs : tensor<1024xf32>
    tt.store %q, %d, %m : tensor<1024x!tt.ptr<f32>>
"""
    )
    src = render(body, local_size=1, features=CPU, vector_bits=512)
    check_lines(
        src,
        """
        float t_v0[1024] __attribute__((aligned(64)));
        float16 vlane0; float16 vlane1;
        for (uint j0 = 0u; j0 < 32u; ++j0) {
        t_v0[(j0)] = x0;
        const float16 vx0 = *((const float16 *)(t_v0 + (o0 * 1024u + 0u) + 0u));
        const float16 vx1 = *((const float16 *)(t_v0 + (o0 * 1024u + 0u) + 16u));
        vlane0 = vx0;
        vlane1 = vx1;
        for (uint q0 = 1u; q0 < 32u; ++q0) {
        t_v0[(q0 * 32u + j0)] = x1;
        const float16 vx2 = *((const float16 *)(t_v0 + (o0 * 1024u + q0 * 32u) + 0u));
        const float16 vx3 = *((const float16 *)(t_v0 + (o0 * 1024u + q0 * 32u) + 16u));
        vlane0 = fmax(vlane0, vx2);
        vlane1 = fmax(vlane1, vx3);
        vlane0 = fmax(vlane0, vlane1);
        float fold0 = vlane0.s0;
        fmax(fold0, vlane0.s1);
        fmax(fold0, vlane0.sf);
        """,
    )
    assert "lane0[" not in src


ROWS_4x256 = """
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %r2 = tt.expand_dims %r {axis = 0 : i32} : tensor<256xi32> -> tensor<1x256xi32>
    %rb = tt.broadcast %r2 : tensor<1x256xi32> -> tensor<4x256xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<4x256x!tt.ptr<f32>>
    %q = tt.addptr %p, %rb : tensor<4x256x!tt.ptr<f32>>, tensor<4x256xi32>
    %v = tt.load %q : tensor<4x256x!tt.ptr<f32>>
"""


def _store_rows(ty: str = "f32") -> str:
    """Store the 4 row results `%z` to x[0:4]."""
    return f"""
    %o4 = tt.make_range {{end = 4 : i32, start = 0 : i32}} : tensor<4xi32>
    %po = tt.splat %x : !tt.ptr<{ty}> -> tensor<4x!tt.ptr<{ty}>>
    %qo = tt.addptr %po, %o4 : tensor<4x!tt.ptr<{ty}>>, tensor<4xi32>
    tt.store %qo, %z : tensor<4x!tt.ptr<{ty}>>
"""


def test_rows_reduced_alone_fold_through_a_small_aligned_chunk():
    """Several rows reduced along their last axis with nothing else reading them: each chunk of 32 elements is
    written to an aligned chunk array, the vector partials read it (no register tile of the whole rows)."""
    body = ROWS_4x256 + _reduce("arith.addf", shape="4x256xf32", result="tensor<4xf32>") + _store_rows()
    src = render(body, local_size=1, features=CPU, vector_bits=512)
    check_lines(
        src,
        """
        for (uint o0 = 0u; o0 < 4u; ++o0) {
        float chunk0[32] __attribute__((aligned(64)));
        chunk0[j0] = x0;
        const float16 vx0 = *((const float16 *)(chunk0 + 0u));
        vlane0 = vx0;
        for (uint q0 = 1u; q0 < 8u; ++q0) {
        float x1 = *((a_x0 + ((int)((q0 * 32u + j0)))));
        const float16 vx2 = *((const float16 *)(chunk0 + 0u));
        const float16 vx3 = *((const float16 *)(chunk0 + 16u));
        vlane0 = (vlane0 + vx2);
        vlane1 = (vlane1 + vx3);
        vlane0 = (vlane0 + vlane1);
        """,
    )
    assert "float t_v" not in src and "lane0[" not in src


def test_a_row_walks_element_indices_are_its_row_and_column():
    """In a walk over several rows the element's indices are the row and its position (a row of 256 here), not
    `lin >> 8` and `lin & 255` of its linear index: the device compiler then sees a contiguous run along the row
    (PoCL, Inductor's softmax over 8 rows of 1024: 3.6 -> 2.8 ms)."""
    body = ROWS_4x256.replace(
        "    %rb = tt.broadcast %r2 : tensor<1x256xi32> -> tensor<4x256xi32>\n",
        "    %rb0 = tt.broadcast %r2 : tensor<1x256xi32> -> tensor<4x256xi32>\n"
        "    %w = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>\n"
        "    %w2 = tt.expand_dims %w {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>\n"
        "    %c256 = arith.constant dense<256> : tensor<4x1xi32>\n"
        "    %w3 = arith.muli %w2, %c256 : tensor<4x1xi32>\n"
        "    %wb = tt.broadcast %w3 : tensor<4x1xi32> -> tensor<4x256xi32>\n"
        "    %rb = arith.addi %rb0, %wb : tensor<4x256xi32>\n",
    )
    body += (
        _reduce("arith.addf", shape="4x256xf32", result="tensor<4xf32>")
        + "    tt.store %x, %v : tensor<4x256x!tt.ptr<f32>>\n"
    )
    src = render(body, local_size=1, features=CPU, vector_bits=512)
    assert ">> 8" not in src and "& 255u" not in src
    check_lines(
        src,
        "float x1 = *((a_x0 + ((int)((uint)((int)((q0 * 32u + j0))) + (uint)((int)((uint)((int)(o0)) * (uint)256))))));",
    )


def test_a_nan_propagating_max_region_folds_into_vector_partials():
    """Inductor's max combine (`select((a > b) | (a != a), a, b)`) as one vector expression: compares give -1/0
    masks lane by lane, `?:` selects by them."""
    region = """
    %z = "tt.reduce"(%v) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %g = arith.cmpf ogt, %a, %b : f32
      %u = arith.cmpf une, %a, %a : f32
      %o = arith.ori %g, %u : i1
      %c = arith.select %o, %a, %b : f32
      tt.reduce.return %c : f32
    }) : (tensor<4x256xf32>) -> tensor<4xf32>
"""
    body = ROWS_4x256 + region + _store_rows()
    src = render(body, local_size=1, features=CPU, vector_bits=512)
    check_lines(
        src,
        """
        vlane0 = (((vlane0 > vx2) | (vlane0 != vlane0)) ? vlane0 : vx2);
        vlane0 = (((vlane0 > vlane1) | (vlane0 != vlane0)) ? vlane0 : vlane1);
        """,
    )


@pytest.mark.parametrize(
    "op,ty",
    [
        ("arith.addi", "i32"),  # wraps on overflow: C's vector `+` on int does not promise that
        ("arith.maxui", "i32"),  # OpenCL's max on an int vector compares signed
        ("arith.subf", "f32"),  # not a reduction's combine, but no vector form either
    ],
)
def test_combines_without_a_vector_form_keep_scalar_lane_arrays(op, ty):
    body = (
        ROWS_4x256.replace("f32>", f"{ty}>")
        + _reduce(op, ty=ty, shape=f"4x256x{ty}", result=f"tensor<4x{ty}>")
        + _store_rows(ty)
    )
    src = render(body, args=f"%x: !tt.ptr<{ty}>, %n: i32", local_size=1, features=CPU, vector_bits=512)
    assert "lane0[32];" in src and "vlane" not in src


def test_a_128_bit_device_holds_four_component_partials():
    src = render(LOAD_1024 + _reduce("arith.maxnumf", src="%v") + "    tt.store %q, %v, %m : tensor<1024x!tt.ptr<f32>>\n"
                 "    tt.store %x, %z : !tt.ptr<f32>\n", local_size=1, features=CPU, vector_bits=128)  # fmt: skip
    assert "float4 vlane0; float4 vlane1;" in src and "vlane0.s3" in src and "vlane0.s4" not in src


# ---- results on this machine's OpenCL device ------------------------------------------------------------------------


@triton.jit
def _combine_and(a, b):
    return a & b


@triton.jit
def _combine_or(a, b):
    return a | b


@triton.jit
def _combine_mul(a, b):
    return a * b


@triton.jit
def _row_kernel(x_ptr, y_ptr, red_ptr, n, other, BLOCK: tl.constexpr, OP: tl.constexpr):
    """red[row] = reduce(x[row]); y[row] = x[row] - red (floats) or x ^ red (ints): the row is stored and reduced."""
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=m, other=other)
    r = _apply(x, 0, OP)
    y = x - r if x.dtype.is_floating() else x ^ r
    tl.store(y_ptr + row * n + offs, y, mask=m)
    tl.store(red_ptr + row, r)


@triton.jit
def _rows_kernel(x_ptr, red_ptr, n_rows, n, other, ROWS: tl.constexpr, BLOCK: tl.constexpr, OP: tl.constexpr):
    """red[rows] = reduce(x[rows, :], axis=1): several rows reduced alone."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    offs = tl.arange(0, BLOCK)
    m = (rows[:, None] < n_rows) & (offs[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * n + offs[None, :], mask=m, other=other)
    tl.store(red_ptr + rows, _apply(x, 1, OP), mask=rows < n_rows)


@triton.jit
def _apply(x, axis: tl.constexpr, OP: tl.constexpr):
    if OP == "sum":
        r = tl.sum(x, axis=axis)
    elif OP == "max":
        r = tl.max(x, axis=axis)
    elif OP == "min":
        r = tl.min(x, axis=axis)
    elif OP == "prod":
        r = tl.reduce(x, axis, _combine_mul)
    elif OP == "xor":
        r = tl.xor_sum(x, axis=axis)
    elif OP == "and":
        r = tl.reduce(x, axis, _combine_and)
    else:
        r = tl.reduce(x, axis, _combine_or)
    return r


_NEUTRAL = {"sum": 0, "xor": 0, "or": 0, "and": -1, "prod": 1}
_TORCH = {
    "sum": lambda x, d: x.sum(d),
    "max": lambda x, d: x.amax(d),
    "min": lambda x, d: x.amin(d),
    "prod": lambda x, d: x.prod(d),
}


def _bitwise(x: torch.Tensor, dim: int, op: str) -> torch.Tensor:
    acc = x.select(dim, 0).clone()
    for i in range(1, x.shape[dim]):
        col = x.select(dim, i)
        acc = acc ^ col if op == "xor" else (acc & col if op == "and" else acc | col)
    return acc


def _reference(x: torch.Tensor, dim: int, op: str) -> torch.Tensor:
    return _TORCH[op](x, dim) if op in _TORCH else _bitwise(x, dim, op)


def _neutral(op: str, dtype: torch.dtype) -> float | int:
    """The masked-off elements' value: the combine's neutral element."""
    if op in _NEUTRAL:
        return float(_NEUTRAL[op]) if dtype.is_floating_point else _NEUTRAL[op]
    if dtype.is_floating_point:
        return -float("inf") if op == "max" else float("inf")
    info = torch.iinfo(dtype)
    return info.min if op == "max" else info.max


def _data(dtype: torch.dtype, op: str, shape: tuple[int, ...], g: torch.Generator) -> torch.Tensor:
    if dtype.is_floating_point:
        if op == "prod":
            return (0.9 + 0.2 * torch.rand(shape, generator=g, dtype=torch.float64)).to(dtype)
        return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
    info = torch.iinfo(dtype)
    if op == "and":  # mostly-set bits, so that the result is not zero
        return torch.randint(0, 1 << 20, shape, generator=g).to(dtype) | (-1 << 4)
    return torch.randint(info.min, info.max, shape, generator=g, dtype=dtype)


CASES = [
    (torch.float32, "sum"),
    (torch.float32, "max"),
    (torch.float32, "min"),
    (torch.float32, "prod"),
    (torch.float64, "sum"),
    (torch.float64, "max"),
    (torch.int32, "max"),
    (torch.int32, "min"),
    (torch.int32, "xor"),
    (torch.int32, "and"),
    (torch.int64, "or"),
    (torch.int64, "max"),
]


def _vector_lanes_expected() -> bool:
    from triton.runtime import driver
    from triton_backend_sdk.backends.opencl.compiler import CPU_FEATURE

    d = driver.active.descriptor()
    return CPU_FEATURE in d.features and d.vector_width_bits >= 256


@pytest.mark.parametrize("n", [1024, 1000])
@pytest.mark.parametrize("dtype,op", CASES, ids=[f"{d}-{o}".replace("torch.", "") for d, o in CASES])
def test_stored_rows_reduce_as_torch_does(ocl, dtype, op, n):
    g = torch.Generator().manual_seed(7 + n)
    rows = 3
    x = _data(dtype, op, (rows, n), g)
    y = torch.zeros_like(x)
    red = torch.zeros(rows, dtype=dtype)
    k = _row_kernel[(rows,)](x, y, red, n, _neutral(op, dtype), BLOCK=1024, OP=op, work_items=1)
    want = _reference(x, 1, op)
    if dtype.is_floating_point:
        tol = {"rtol": 1e-5, "atol": 1e-4} if dtype == torch.float32 else {"rtol": 1e-12, "atol": 1e-10}
        torch.testing.assert_close(red, want, **tol)
        torch.testing.assert_close(y, x - red[:, None], **tol)
    else:
        assert torch.equal(red, want) and torch.equal(y, x ^ red[:, None])
    if _vector_lanes_expected():
        assert "vlane0" in k.asm["cl"], "the combine was expected to fold into vector partials"


@pytest.mark.parametrize("dtype,op", CASES, ids=[f"{d}-{o}".replace("torch.", "") for d, o in CASES])
def test_rows_reduced_alone_match_torch(ocl, dtype, op):
    g = torch.Generator().manual_seed(11)
    n_rows, n = 10, 250  # ragged rows (the last program's) and columns
    x = _data(dtype, op, (n_rows, n), g)
    red = torch.zeros(n_rows, dtype=dtype)
    k = _rows_kernel[(triton.cdiv(n_rows, 4),)](
        x, red, n_rows, n, _neutral(op, dtype), ROWS=4, BLOCK=256, OP=op, work_items=1
    )
    want = _reference(x, 1, op)
    if dtype.is_floating_point:
        tol = {"rtol": 1e-5, "atol": 1e-4} if dtype == torch.float32 else {"rtol": 1e-12, "atol": 1e-10}
        torch.testing.assert_close(red, want, **tol)
    else:
        assert torch.equal(red, want)
    if _vector_lanes_expected():
        assert "chunk0" in k.asm["cl"] and "vlane0" in k.asm["cl"]


@triton.jit
def _nan_max(a, b):
    return tl.where((a > b) | (a != a), a, b)  # noqa: PLR0124 - the NaN test Inductor writes


@triton.jit
def _nan_max_rows_kernel(x_ptr, y_ptr, red_ptr, n_rows, n, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """Several rows stored and reduced by Inductor's NaN-propagating max; y = x - max per row."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    offs = tl.arange(0, BLOCK)
    m = (rows[:, None] < n_rows) & (offs[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * n + offs[None, :], mask=m, other=-float("inf"))
    r = tl.reduce(x, 1, _nan_max)
    tl.store(y_ptr + rows[:, None] * n + offs[None, :], x - r[:, None], mask=m)
    tl.store(red_ptr + rows, r, mask=rows < n_rows)


def test_nan_propagating_max_matches_torch_with_nans_in_some_rows(ocl):
    g = torch.Generator().manual_seed(5)
    n_rows, n = 10, 1000
    x = torch.randn(n_rows, n, generator=g)
    x[1, 7] = x[4, 999] = x[9, 500] = float("nan")
    x[6, 3] = float("inf")
    y, red = torch.zeros_like(x), torch.zeros(n_rows)
    k = _nan_max_rows_kernel[(triton.cdiv(n_rows, 4),)](x, y, red, n_rows, n, ROWS=4, BLOCK=1024, work_items=1)
    want = x.amax(1)
    torch.testing.assert_close(red, want, equal_nan=True, rtol=0, atol=0)
    torch.testing.assert_close(y, x - want[:, None], equal_nan=True)
    if _vector_lanes_expected():
        assert "? vlane0 :" in k.asm["cl"]


@triton.jit
def _row_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """One row reduced alone (its load read only by the sum)."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * BLOCK + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))


@pytest.mark.parametrize("n", [4096, 4001, 17, 0, -5])
def test_one_row_reduced_alone_matches_torch_masks_included(ocl, n):
    """A single row's full reduction on one work-item walks the row into vector partials (before: a scalar lane
    array); all-masked rows (n <= 0) sum to 0."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(3, 4096, generator=g)
    out = torch.full((3,), float("nan"))
    k = _row_sum_kernel[(3,)](x, out, n, BLOCK=4096, work_items=1)
    torch.testing.assert_close(out, x[:, : max(n, 0)].sum(1), rtol=1e-5, atol=1e-4)
    if _vector_lanes_expected():
        assert "vlane0" in k.asm["cl"]


# ---- chunks read without their mask where AxisInfo proves it the same over runs ------------------------------------

SOFTMAX_ROW = (
    LOAD_1024.replace(
        "%v = tt.load %q, %m :",
        "%ninf = arith.constant dense<0xFF800000> : tensor<1024xf32>\n    %v = tt.load %q, %m, %ninf :",
    )
    + _reduce("arith.maxnumf")
    + """
    %zs = tt.splat %z : f32 -> tensor<1024xf32>
    %d = arith.subf %v, %zs : tensor<1024xf32>
    tt.store %q, %d, %m : tensor<1024x!tt.ptr<f32>>
"""
)


def test_a_chunk_whose_mask_runs_test_true_reads_unmasked():
    """`offs < n` with n divisible by 16 is the same over runs of 16 (AxisInfo): a chunk of 32 tests its two runs'
    first elements and reads its elements without the mask; any other chunk reads them masked."""
    src = render(SOFTMAX_ROW, args="%x: !tt.ptr<f32>, %n: i32 {tt.divisibility = 16 : i32}", local_size=1,
                 features=CPU, vector_bits=512)  # fmt: skip
    check_lines(
        src,
        """
        for (uint q0 = 1u; q0 < 32u; ++q0) {
        if ((((int)(q0 * 32u + 0u)) < a_n0) && (((int)(q0 * 32u + 16u)) < a_n0)) {
        float x2 = *((a_x0 + ((int)(q0 * 32u + j0))));
        } else {
        float x3 = ((((int)(q0 * 32u + j0)) < a_n0) ? *((a_x0 + ((int)(q0 * 32u + j0)))) : v_ninf0);
        """,
    )


def test_a_mask_without_proven_runs_is_tested_per_element():
    src = render(SOFTMAX_ROW, local_size=1, features=CPU, vector_bits=512)
    assert "if ((((int)(q0" not in src and src.count("< a_n0) ? *(") == 2


@triton.jit
def _softmax_rows_kernel(x_ptr, y_ptr, n_rows, n, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    offs = tl.arange(0, BLOCK)
    m = (rows[:, None] < n_rows) & (offs[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * n + offs[None, :], mask=m, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    tl.store(y_ptr + rows[:, None] * n + offs[None, :], e / tl.sum(e, axis=1)[:, None], mask=m)


@pytest.mark.parametrize("n", [1024, 1008, 1000, 1001, 16])
@pytest.mark.parametrize("rows_per_program", [1, 4])
def test_softmax_rows_with_whole_and_partial_mask_runs_match_torch(ocl, n, rows_per_program):
    """Rows whose chunks are all in (1024), end in a half-in chunk (1008: 31.5 chunks), end on a run (1000), have no
    proven runs (1001), or fit in one run (16); 1 and 4 rows per program, the last program's rows partly out."""
    g = torch.Generator().manual_seed(n)
    n_rows = 7
    x = torch.randn(n_rows, n, generator=g)
    y = torch.full_like(x, float("nan"))
    k = _softmax_rows_kernel[(triton.cdiv(n_rows, rows_per_program),)](
        x, y, n_rows, n, ROWS=rows_per_program, BLOCK=1024, work_items=1
    )
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-7)
    if _vector_lanes_expected() and n % 16 == 0 and n > 16:
        assert re.search(r"0u \+ 16u\)+ < a_n0", k.asm["cl"]), "the walk was expected to test whole runs of the mask"
