"""A corpus of varied `@triton.jit` kernels and their TTIR, compiled on the CPU (no GPU, no ptxas).

Used by the IR reader/printer tests and available to any test that wants real TTIR. `ttir_text(entry)` runs only the
front end and the CUDA backend's `make_ttir` passes: the full `triton.compile` would go on to ptxas, which is slow
and rejects some of these kernels (e.g. `.cg` combined with `evict_last`), and TTIR is all we need.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton_backend_sdk.ir import Module, Op

# ---------------------------------------------------------------------------------------------------------------------
# Kernels. Keep each small: the point is syntax coverage, not performance.


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def masked_load_other(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask, other=float("-inf"))
    b = tl.load(x_ptr + offs, mask=mask, other=0.0, cache_modifier=".cg", eviction_policy="evict_last")
    c = tl.load(x_ptr + offs, mask=mask, other=float("nan"), volatile=True)
    tl.store(out_ptr + offs, tl.maximum(a, b) + c, mask=mask, cache_modifier=".wb")


@triton.jit
def softmax(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + cols, num / den, mask=mask)


@triton.jit
def broadcast_2d(a_ptr, b_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    a = tl.load(a_ptr + rm, mask=rm < M, other=0.0)
    b = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    outer = a[:, None] * b[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], outer, mask=mask)


@triton.jit
def scalar_args(out_ptr, alpha, big, flag, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    val = alpha * offs.to(tl.float32)
    if flag:
        val = val + 1.5
    off64 = big + offs.to(tl.int64)
    val = val + off64.to(tl.float32)
    tl.store(out_ptr + offs, val, mask=offs < n)


@triton.jit
def for_loop(x_ptr, out_ptr, n_iters, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    cnt = 0
    for i in range(n_iters):
        acc += tl.load(x_ptr + i * BLOCK + offs)
        cnt += 1
    for j in range(4):
        acc = acc * 0.5
    for k in tl.range(0, n_iters, 2, num_stages=3):
        tl.store(out_ptr + offs, acc + k)
    tl.store(out_ptr + offs, acc / cnt)


@triton.jit
def if_else(x_ptr, out_ptr, n, thresh, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if pid < thresh:
        y = x * 2.0
        z = pid + 1
    else:
        y = x - 1.0
        z = pid * 3
    if n > 7:
        tl.store(out_ptr + offs, y)
    tl.store(out_ptr + offs + z, y)


@triton.jit
def while_loop(x_ptr, out_ptr, n):
    i = 0
    total = 0.0
    while i < n:
        total += tl.load(x_ptr + i)
        i += 2
    tl.store(out_ptr, total)


@triton.jit
def argmax_reduce(x_ptr, idx_ptr, val_ptr, N: tl.constexpr):
    rows = tl.arange(0, 4)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    v, i = tl.max(x, axis=1, return_indices=True)
    j = tl.argmin(x, axis=1)
    tl.store(idx_ptr + rows, i + j)
    tl.store(val_ptr + rows, v)
    tl.store(val_ptr + 4 + rows, tl.min(x, axis=1) + tl.sum(x, axis=1))


@triton.jit
def _mul_combine(a, b):
    return a * b


@triton.jit
def scan(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    c = tl.cumsum(x, axis=0)
    p = tl.associative_scan(x, 0, _mul_combine, reverse=True)
    tl.store(out_ptr + offs, c + p)


@triton.jit
def dot_fp32(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b, input_precision="ieee")
    c = tl.dot(a, b, c, input_precision="tf32")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@triton.jit
def dot_fp16(a_ptr, b_ptr, c_ptr, K, M: tl.constexpr, N: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, BK)
    acc = tl.zeros((M, N), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def atomics(x_ptr, cnt_ptr, lock_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    old = tl.atomic_add(x_ptr + offs, 1.0, mask=mask)
    tl.atomic_max(cnt_ptr + offs, offs, sem="relaxed", scope="cta")
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.atomic_xchg(lock_ptr, 0, sem="release", scope="sys")
    tl.atomic_add(cnt_ptr, 1)
    tl.store(x_ptr + offs, old, mask=mask)


@triton.jit
def shape_ops(x_ptr, pair_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    two = tl.arange(0, 2)
    x = tl.load(x_ptr + offs)
    y = tl.load(x_ptr + N + offs)
    c = tl.cat(x, y, can_reorder=True)
    j = tl.join(x, y)
    tl.store(pair_ptr + offs[:, None] * 2 + two[None, :], j)
    pairs = tl.load(pair_ptr + N * 2 + offs[:, None] * 2 + two[None, :])
    a, b = tl.split(pairs)
    m = tl.reshape(c, (2, N))
    t = tl.trans(m)
    r = tl.reshape(t, (2 * N,))
    p = tl.permute(tl.reshape(r, (2, 2, N // 2)), (2, 0, 1))
    tl.store(out_ptr + offs, a * b)
    tl.store(out_ptr + tl.arange(0, 2 * N), r + tl.reshape(p, (2 * N,), can_reorder=True))


@triton.jit
def gather_hist(x_ptr, idx_ptr, out_ptr, hist_ptr, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    idx = tl.load(idx_ptr + offs)
    g = tl.gather(x, idx, axis=0)
    h = tl.histogram(idx, BINS)
    hm = tl.histogram(idx, BINS, mask=offs < 3)
    tl.store(out_ptr + offs, g)
    tl.store(hist_ptr + tl.arange(0, BINS), h + hm)


@triton.jit
def fp8_casts(x_ptr, out8_ptr, out16_ptr, outbf_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    a = x.to(tl.float8e5, fp_downcast_rounding="rtne")
    b = x.to(tl.float8e4nv)
    tl.store(out8_ptr + offs, a)
    h = x.to(tl.float16, fp_downcast_rounding="rtz")
    tl.store(out16_ptr + offs, h + b.to(tl.float16))
    tl.store(outbf_ptr + offs, x.to(tl.bfloat16))
    bits = x.to(tl.int32, bitcast=True)
    tl.store(out16_ptr + N + offs, (bits >> 16).to(tl.int16).to(tl.float16, bitcast=True))


@triton.jit
def extern_math(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = libdevice.tanh(x) + libdevice.pow(x, 2.0) + tl.exp2(x) + tl.log(x) + tl.sqrt(x)
    y = y + tl.rsqrt(x) + tl.erf(x) + tl.floor(x) + tl.ceil(x) + tl.sin(x) + tl.cos(x) + tl.abs(x)
    y = y + tl.fma(x, x, x) + tl.sqrt_rn(x) + tl.div_rn(x, y) + tl.log2(x)
    ix = offs - 3
    tl.store(out_ptr + offs, y + tl.abs(ix).to(tl.float32) + (ix % 3).to(tl.float32))


@triton.jit
def print_assert(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.device_print("x=", x)
    tl.device_print("pid", pid, hex=True)
    tl.device_assert(x >= 0, "x must be non-negative")
    tl.device_assert(pid < 100, "too many programs")


@triton.jit(noinline=True)
def _noinline_helper(ptr, v, k):
    tl.store(ptr + k, v * 2.0)


@triton.jit
def noinline_call(x_ptr, n):
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid)
    _noinline_helper(x_ptr, v, pid + n)


@triton.jit
def tensor_desc(a_ptr, out_ptr, u_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    desc = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN], padding_option="nan")
    odesc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    udesc = tl.make_tensor_descriptor(u_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pm = tl.program_id(0) * BM
    pn = tl.program_id(1) * BN
    v = desc.load([pm, pn])
    odesc.store([pm, pn], v * 2.0)
    udesc.store([pm, pn], udesc.load([pm, pn]) + 1)


@triton.jit
def grid_3d(out_ptr):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(2)
    nx = tl.num_programs(0)
    ny = tl.num_programs(1)
    nz = tl.num_programs(2)
    lin = (z * ny + y) * nx + x
    tl.store(out_ptr + lin, lin * nz)


@triton.jit
def where_clamp_bits(x_ptr, u_ptr, out_ptr, lo, hi, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    u = tl.load(u_ptr + offs)
    w = tl.where(x > 0.0, x, -x)
    c = tl.clamp(w, lo, hi)
    cn = tl.clamp(x, lo, hi, propagate_nan=tl.PropagateNan.ALL)
    hi32 = tl.umulhi(u, u)
    bits = c.to(tl.uint32, bitcast=True) ^ hi32
    f = bits.to(tl.float32, bitcast=True)
    s = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [u], dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, f + cn + s.to(tl.float32) + tl.where(u > 3, 1.0, 2.0))


@triton.jit
def int64_ptr_math(x_ptr, out_ptr, stride, n, base, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * stride + tl.arange(0, BLOCK).to(tl.int64)
    addr = x_ptr.to(tl.int64, bitcast=True)
    p = (addr + 8).to(tl.pointer_type(tl.float32), bitcast=True)
    x = tl.load(p + offs, mask=offs < n)
    q = tl.cast(x_ptr, tl.int64)
    y = x + (q % 7).to(tl.float32)
    tl.store(out_ptr + offs, y.to(tl.float64).to(tl.float32), mask=offs < n)
    raw = tl.cast(base, tl.pointer_type(tl.float32))
    tl.store(raw + offs, y, mask=offs < n)


@triton.jit
def int_ops(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    u = x.to(tl.uint32)
    a = (x // 3) + (x % 5) + (u // 7).to(tl.int32) + (u % 9).to(tl.int32)
    b = (x << 2) | (x >> 1) ^ (u >> 3).to(tl.int32) & 0xFF
    c = tl.minimum(a, b) + tl.maximum(a, b)
    d = c.to(tl.int8).to(tl.int32) + c.to(tl.uint8).to(tl.int32)
    f = d.to(tl.float32)
    g = f.to(tl.int32) + u.to(tl.float32).to(tl.uint32).to(tl.int32)
    tl.store(out_ptr + offs, g)


# ---------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CorpusEntry:
    """One kernel with everything needed to compile it.

    `signature` is Triton's (constexpr parameters included, as "constexpr"), `constexprs` their values, `attrs`
    Triton's per-argument attributes keyed by argument path (e.g. `{(0,): [["tt.divisibility", 16]]}`), `options` the
    backend compile options. Entries hash by identity so `ttir_text` can cache on them.
    """

    name: str
    fn: Any
    signature: dict[str, str]
    constexprs: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    attrs: dict[tuple[int, ...], list[list[Any]]] = field(default_factory=dict)
    capability: int = 90


def _e(
    fn: Any,
    sig: dict[str, str],
    constexprs: dict[str, Any] | None = None,
    attrs: dict[tuple[int, ...], list[list[Any]]] | None = None,
    **options: Any,
) -> CorpusEntry:
    cap = options.pop("capability", 90)
    full_sig = dict(sig)
    for k in constexprs or {}:
        full_sig[k] = "constexpr"
    return CorpusEntry(fn.__name__, fn, full_sig, dict(constexprs or {}), options, dict(attrs or {}), cap)


_P32 = "*fp32"
CORPUS: list[CorpusEntry] = [
    _e(
        vector_add,
        {"x_ptr": _P32, "y_ptr": _P32, "out_ptr": _P32, "n": "i32"},
        {"BLOCK": 128},
        attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]], (3,): [["tt.divisibility", 16]]},
    ),
    _e(masked_load_other, {"x_ptr": _P32, "out_ptr": _P32, "n": "i32"}, {"BLOCK": 64}),
    _e(
        softmax,
        {"out_ptr": _P32, "in_ptr": _P32, "in_stride": "i32", "out_stride": "i32", "n_cols": "i32"},
        {"BLOCK": 256},
    ),
    _e(broadcast_2d, {"a_ptr": _P32, "b_ptr": _P32, "out_ptr": _P32, "M": "i32", "N": "i32"}, {"BM": 16, "BN": 32}),
    _e(scalar_args, {"out_ptr": _P32, "alpha": "fp32", "big": "i64", "flag": "i1", "n": "i32"}, {"BLOCK": 32}),
    _e(for_loop, {"x_ptr": _P32, "out_ptr": _P32, "n_iters": "i32"}, {"BLOCK": 32}),
    _e(if_else, {"x_ptr": _P32, "out_ptr": _P32, "n": "i32", "thresh": "i32"}, {"BLOCK": 32}),
    _e(while_loop, {"x_ptr": _P32, "out_ptr": _P32, "n": "i32"}),
    _e(argmax_reduce, {"x_ptr": _P32, "idx_ptr": "*i32", "val_ptr": _P32}, {"N": 16}),
    _e(scan, {"x_ptr": _P32, "out_ptr": _P32}, {"N": 64}),
    _e(dot_fp32, {"a_ptr": _P32, "b_ptr": _P32, "c_ptr": _P32}, {"M": 16, "N": 16, "K": 16}),
    _e(dot_fp16, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "K": "i32"}, {"M": 32, "N": 32, "BK": 16}),
    _e(atomics, {"x_ptr": _P32, "cnt_ptr": "*i32", "lock_ptr": "*i32", "n": "i32"}, {"BLOCK": 32}),
    _e(shape_ops, {"x_ptr": _P32, "pair_ptr": _P32, "out_ptr": _P32}, {"N": 32}),
    _e(gather_hist, {"x_ptr": _P32, "idx_ptr": "*i32", "out_ptr": _P32, "hist_ptr": "*i32"}, {"N": 32, "BINS": 8}),
    _e(fp8_casts, {"x_ptr": _P32, "out8_ptr": "*fp8e5", "out16_ptr": "*fp16", "outbf_ptr": "*bf16"}, {"N": 32}),
    _e(extern_math, {"x_ptr": _P32, "out_ptr": _P32}, {"N": 64}),
    _e(print_assert, {"x_ptr": _P32, "n": "i32"}, {"BLOCK": 16}, debug=True),
    _e(noinline_call, {"x_ptr": _P32, "n": "i32"}),
    _e(tensor_desc, {"a_ptr": _P32, "out_ptr": _P32, "u_ptr": "*u32", "M": "i32", "N": "i32"}, {"BM": 32, "BN": 32}),
    _e(grid_3d, {"out_ptr": "*i32"}),
    _e(where_clamp_bits, {"x_ptr": _P32, "u_ptr": "*u32", "out_ptr": _P32, "lo": "fp32", "hi": "fp32"}, {"N": 32}),
    _e(int64_ptr_math, {"x_ptr": _P32, "out_ptr": _P32, "stride": "i64", "n": "i64", "base": "i64"}, {"BLOCK": 64}),
    _e(int_ops, {"x_ptr": "*i32", "out_ptr": "*i32"}, {"N": 32}),
]

CORPUS_BY_NAME: dict[str, CorpusEntry] = {e.name: e for e in CORPUS}


def _compile_to_ttir(entry: CorpusEntry) -> str:
    """Front end + `make_ttir` of the CUDA backend: the same passes `triton.compile` runs before TTGIR."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend

    target = GPUTarget("cuda", entry.capability, 32)
    backend = make_backend(target)
    src = ASTSource(entry.fn, signature=entry.signature, constexprs=entry.constexprs, attrs=entry.attrs)
    ctx = ir.context()
    ir.load_dialects(ctx)
    backend.load_dialects(ctx)
    with warnings.catch_warnings():
        # deprecation notes about can_reorder and the FP-fusion default are irrelevant to the IR we want
        warnings.simplefilter("ignore")
        options = backend.parse_options(dict(entry.options, **src.parse_options()))
        module = src.make_ir(
            target, options, backend.get_codegen_implementation(options), backend.get_module_map(), ctx
        )
        module = backend.make_ttir(module, {}, options, entry.capability)
    return str(module)


@functools.cache
def ttir_text(entry: CorpusEntry) -> str:
    """TTIR text of one corpus kernel, as `compiled.asm["ttir"]` would show it (cached per process)."""
    return _compile_to_ttir(entry)


def all_ttir() -> dict[str, str]:
    return {e.name: ttir_text(e) for e in CORPUS}


# ---------------------------------------------------------------------------------------------------------------------
# Oracle for tests: Triton's own MLIR parser through its Python bindings


def oracle_records(text: str) -> list[tuple[str, list[int], list[tuple[int, str]], list[tuple[int, str]]]]:
    """(op name, operand ids, [(result id, type)], [(parent block arg id, type)]) for each op in MLIR walk order.

    Everything is read inside the walk callback while the module is alive; operand indices never exceed
    `get_num_operands()` (an out-of-range `get_operand` aborts the process)."""
    from triton._C.libtriton import ir

    ctx = ir.context()
    ir.load_dialects(ctx)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "kernel.ttir")
        Path(path).write_text(text)
        mod = ir.parse_mlir_module(path, ctx)
    records = []

    def visit(op: object) -> None:
        name = op.get_name()  # type: ignore[attr-defined]
        if name == "builtin.module":
            return
        operands = [op.get_operand(i).id() for i in range(op.get_num_operands())]  # type: ignore[attr-defined]
        results = [
            (op.get_result(i).id(), str(op.get_result(i).get_type()))  # type: ignore[attr-defined]
            for i in range(op.get_num_results())
        ]  # type: ignore[attr-defined]
        block = op.get_block()  # type: ignore[attr-defined]
        args = [
            (block.get_argument(i).id(), str(block.get_argument(i).get_type()))
            for i in range(block.get_num_arguments())
        ]
        records.append((name, operands, results, args))

    mod.walk(visit)
    return records


def _triton_type(s: str) -> str:
    """Triton 3.7 spells tensor descriptors `!tt.tensordesc<tensor<...>>`; the SDK prints the 3.9 spelling."""
    return re.sub(r"tensordesc<tensor<([^<>]*)>>", r"tensordesc<\1>", s)


def cross_check(text: str, module: Module) -> None:
    records = oracle_records(text)
    ours = [o for top in module.ops for o in post_order(top)]
    assert [r[0] for r in records] == [o.op_name for o in ours]
    ids: dict[int, object] = {}
    for op, (name, _, results, args) in zip(ours, records):
        assert len(results) == len(op.results), name
        for (rid, rtype), r in zip(results, op.results):
            ids[rid] = r
            assert str(r.type) == _triton_type(rtype), f"{name} result type"
        block = op.parent
        if block is not None and block.parent is not None:
            assert len(args) == len(block.args), f"block of {name}"
            for (aid, atype), a in zip(args, block.args):
                ids[aid] = a
                assert str(a.type) == _triton_type(atype), f"block argument of {name}"
    for op, (name, operands, _, _) in zip(ours, records):
        assert len(operands) == len(op.operands), f"{name} operand count"
        for i, (vid, v) in enumerate(zip(operands, op.operands)):
            assert ids.get(vid) is v, f"{name} operand #{i} is linked to the wrong value"


def post_order(op: Op) -> Iterator[Op]:
    """MLIR's default walk order (what `module.walk` in the bindings visits)."""
    for r in op.regions:
        for b in r.blocks:
            for o in b.ops:
                yield from post_order(o)
    yield op


# ---------------------------------------------------------------------------------------------------------------------
# Hand-written TTIR: spellings the corpus cannot produce on this Triton (3.7 forms, generic forms, unknown ops,
# unstructured control flow, every location form). Shared by the reader and printer tests.

SNIPPETS: dict[str, str] = {
    "ttir37": """#loc = loc("k.py":1:0)
module {
  tt.func public @k(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("p"(#loc)), %d: !tt.ptr<f32> loc("d"(#loc)), %M: i32 loc("M"(#loc))) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32 loc(#loc1)
    %c1_i64 = arith.constant 1 : i64 loc(#loc1)
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32> loc(#loc1)
    %m = arith.cmpi slt, %r, %r : tensor<64xi32> loc(#loc1)
    %s = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>> loc(#loc1)
    %a = tt.addptr %s, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32> loc(#loc1)
    %x = tt.load %a, %m cacheModifier = cg evictionPolicy = evict_last : tensor<64x!tt.ptr<f32>> loc(#loc2)
    tt.store %a, %x, %m cacheModifier = wb : tensor<64x!tt.ptr<f32>> loc(#loc2)
    %e = arith.extsi %M : i32 to i64 loc(#loc1)
    %desc = tt.make_tensor_descriptor %d, [%M, %M], [%e, %c1_i64] {padding = 2 : i32} : <f32>, <tensor<32x32xf32>> loc(#loc1)
    %v = tt.descriptor_load %desc[%c0_i32, %c0_i32] : !tt.tensordesc<tensor<32x32xf32>> -> tensor<32x32xf32> loc(#loc2)
    tt.descriptor_store %desc[%c0_i32, %c0_i32], %v : !tt.tensordesc<tensor<32x32xf32>>, tensor<32x32xf32> loc(#loc2)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("k.py":3:10)
#loc2 = loc("x"(#loc1))
""",
    "constants": """module {
  tt.func @k() {
    %a = arith.constant 1.000000e-01 : f32
    %b = arith.constant 0x7FC00000 : f32
    %c = arith.constant 0xFF800000 : f32
    %d = arith.constant 1.5 : f64
    %e = arith.constant -2147483648 : i64
    %f = arith.constant 255 : i8
    %t = arith.constant true
    %g = arith.constant 0x3C00 : f16
    %h = arith.constant dense<[1, 2, 3, 4]> : tensor<2x2xi32>
    %i = arith.constant dense<[[1.5, 2.0], [0x7F800000, -0.0]]> : tensor<2x2xf32>
    %j = arith.constant dense<true> : tensor<8xi1>
    %k = arith.constant dense<"0x0000803F00000040"> : tensor<2xf32>
    %l = arith.constant 3.33333343e-01 : f32
    tt.return
  }
}""",
    "locations": """#a = loc("k.py":7:3)
#b = loc("inner.py":100:1)
module {
  tt.func @k(%x: i32 loc("x"(#a))) {
    %0 = arith.addi %x, %x : i32 loc(callsite(#b at callsite(#c at #a)))
    %1 = arith.addi %0, %x : i32 loc(fused[unknown, #later, #a])
    %2 = arith.addi %1, %x : i32 loc(unknown)
    %3 = arith.addi %2, %x : i32 loc("named"(callsite(#b at #a)))
    %4 = arith.addi %3, %x : i32 loc("k.py":9:2 to :8)
    %5 = arith.addi %4, %x : i32
    tt.return
  } loc(#a)
} loc(#a)
#c = loc("other.py":1:1)
#later = loc("k.py":8:4)
""",
    "cf_forward": """module {
  tt.func @f(%a: i32, %c: i1) -> i32 {
    cf.cond_br %c, ^bb1(%a : i32), ^bb3
  ^bb2:
    %y = arith.addi %x, %b : i32
    tt.return %y : i32
  ^bb1(%b: i32):
    %x = arith.muli %b, %b : i32
    cf.br ^bb2
  ^bb3:
    tt.return %a : i32
  }
}
""",
    "generic_known": """module {
  tt.func @k(%p: !tt.ptr<f32>, %a: i32) {
    %0 = "arith.cmpi"(%a, %a) <{predicate = 2 : i64}> : (i32, i32) -> i1
    %1 = "tt.get_program_id"() <{axis = 2 : i32}> : () -> i32
    %2 = "tt.load"(%p) <{cache = 3 : i32, evict = 3 : i32, isVolatile = false, operandSegmentSizes = array<i32: 1, 0, 0>}> : (!tt.ptr<f32>) -> f32
    tt.return
  }
}""",
    "unknown_ops": """module {
  tt.func @k(%a: i32) {
    %0 = "foo.generic"(%a) ({
    ^bb0(%x: i32):
      "foo.yield"(%x) : (i32) -> ()
    }) {bar = 1 : i32, baz} : (i32) -> i32
    %1 = foo.custom %a, %0 {q = "s"} : i32
    %2:2 = foo.pair %1 : i32 -> (i32, f32)
    %3 = foo.ty %a : vector<4xi32>
    tt.return
  }
}""",
    "fastmath": """module {
  tt.func @k(%a: f32) {
    %0 = arith.addf %a, %a fastmath<fast> : f32
    %1 = arith.cmpf olt, %0, %a fastmath<nnan> : f32
    tt.return
  }
}""",
    # Triton 3.9-only ops and rarer spellings (checked against Triton's own parser where it knows them)
    "misc39": """module {
  tt.func public @misc(%p: !tt.ptr<i32>, %d: !tt.ptr<f32>, %n: i32, %c: i1) {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c1_i64 = arith.constant 1 : i64
    %idx = arith.index_cast %n : i32 to index
    %back = arith.index_cast %idx : index to i32
    %0 = tt.atomic_load acquire, gpu, %p : (!tt.ptr<i32>) -> i32
    tt.atomic_store release, sys, %p, %0 : !tt.ptr<i32>
    %1 = tt.atomic_poll acquire, gpu, %p, %0 : !tt.ptr<i32>, i32 -> i1
    %e = arith.extsi %n : i32 to i64
    %desc = tt.make_tensor_descriptor %d, [%n, %n], [%e, %c1_i64] : <f32>, <32x32xf32>
    %v = tt.descriptor_load %desc[%c0_i32, %c0_i32] : !tt.tensordesc<32x32xf32> -> tensor<32x32xf32>
    tt.descriptor_reduce add, %desc[%c0_i32, %back], %v : !tt.tensordesc<32x32xf32>, tensor<32x32xf32>
    %r = tt.reshape %v efficient_layout : tensor<32x32xf32> -> tensor<1024xf32>
    %q = tt.approx_divf %r, %r : tensor<1024xf32>
    %one = tt.reshape %q : tensor<1024xf32> -> tensor<1x1024xf32>
    %s = tt.make_range {end = 1 : i32, start = 0 : i32} : tensor<1xi32>
    %u = tt.unsplat %s : tensor<1xi32>
    %acc = scf.for unsigned %i = %c0_i32 to %n step %c1_i32 iter_args(%a = %u) -> (i32)  : i32 {
      %t = arith.addi %a, %i : i32
      scf.yield %t : i32
    }
    %w = math.exp %q fastmath<fast> : tensor<1024xf32>
    %cmp = arith.cmpi ult, %acc, %0 : i32
    cf.assert %cmp, "acc < poll"
    tt.return
  }
}
""",
}
