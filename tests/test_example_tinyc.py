"""The second example backend (examples/tinyc_backend): its own code generator (C) and its own loading, installed
with pip into a throwaway venv (example_venv.py). Kernels run against torch on random, ragged data."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap

import pytest
from example_venv import example_python, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "tinyc_backend")

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the example venv is built with POSIX's layout"),
    pytest.mark.skipif(shutil.which("cc") is None, reason="tinyc compiles with the system C compiler `cc`: none here"),
]

KERNELS = textwrap.dedent("""
    import torch, triton, triton.language as tl
    import triton_backend_sdk as tbs

    tbs.use("tinyc")
    g = torch.Generator().manual_seed(11)

    @triton.jit
    def add(X, Y, Z, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(Z + offs, tl.load(X + offs, mask=m) + tl.load(Y + offs, mask=m), mask=m)

    @triton.jit
    def softmax(X, Y, n, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(X + row * stride + offs, mask=m, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(Y + row * stride + offs, e / tl.sum(e, axis=0), mask=m)

    @triton.jit
    def matmul(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), tl.float32)
        for k0 in range(0, K, BK):
            rk = k0 + tl.arange(0, BK)
            a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            b = tl.load(B + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, b)
        tl.store(C + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.jit
    def argmax_rows(X, Out, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(X + tl.program_id(0) * n + offs, mask=offs < n, other=-float("inf"))
        tl.store(Out + tl.program_id(0), tl.argmax(x, axis=0))

    @triton.jit
    def scans(X, S, R, M, rows, cols, BLOCK: tl.constexpr):
        r = tl.arange(0, BLOCK)
        m = r < cols
        x = tl.load(X + tl.program_id(0) * cols + r, mask=m, other=0.0)
        tl.store(S + tl.program_id(0) * cols + r, tl.cumsum(x, axis=0), mask=m)
        tl.store(R + tl.program_id(0) * cols + r, tl.cumsum(x, axis=0, reverse=True), mask=m)
        xi = tl.load(X + tl.program_id(0) * cols + r, mask=m, other=0.0).to(tl.int32)
        tl.store(M + tl.program_id(0) * cols + r, tl.umulhi(xi * 7919, xi * 104729 + 3), mask=m)

    n = 1237
    x, y = torch.randn(n, generator=g), torch.randn(n, generator=g)
    z = torch.empty_like(x)
    k = add[(triton.cdiv(n, 128),)](x, y, z, n, BLOCK=128)
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)
    assert k.metadata.target.backend == "tinyc" and "tinyc_entry" in k.asm["c"], k.metadata

    x = torch.randn(9, 45, generator=g) * 4
    out = torch.empty_like(x)
    softmax[(9,)](x, out, 45, 45, BLOCK=64)
    torch.testing.assert_close(out, torch.softmax(x, 1))

    a, b = torch.randn(50, 70, generator=g), torch.randn(70, 33, generator=g)
    c = torch.empty(50, 33)
    matmul[(triton.cdiv(50, 16), triton.cdiv(33, 16))](a, b, c, 50, 33, 70, BM=16, BN=16, BK=16)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)

    x = torch.randn(6, 29, generator=g)
    idx = torch.empty(6, dtype=torch.int32)
    argmax_rows[(6,)](x, idx, 29, BLOCK=32)
    assert idx.tolist() == x.argmax(1).tolist(), (idx, x.argmax(1))
    x = torch.randn(4, 37, generator=g) * 100
    s, r, mh = torch.empty_like(x), torch.empty_like(x), torch.empty(4, 37, dtype=torch.int32)
    scans[(4,)](x, s, r, mh, 4, 37, BLOCK=64)
    torch.testing.assert_close(s, x.double().cumsum(1).float(), rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(r, x.double().flip(1).cumsum(1).flip(1).float(), rtol=1e-5, atol=1e-3)
    xi = x.to(torch.int32).to(torch.int64)
    a, b = (xi * 7919) & 0xFFFFFFFF, (xi * 104729 + 3) & 0xFFFFFFFF
    exact = [(int(p) * int(q)) >> 32 for p, q in zip(a.flatten(), b.flatten())]  # Python ints: no overflow
    got = [v & 0xFFFFFFFF for v in mh.flatten().tolist()]
    assert got == exact, "umulhi"
    print("TINYC OK")
""")

ASSERTS = textwrap.dedent("""
    import torch, triton, triton.language as tl
    import triton_backend_sdk as tbs

    tbs.use("tinyc")

    @triton.jit
    def check(X, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < n, other=0)
        tl.device_assert(x < 100, "x too big")

    x = torch.arange(40, dtype=torch.int32)
    check[(3,)](x, 40, BLOCK=16)
    x[37] = 500
    try:
        check[(3,)](x, 40, BLOCK=16)
    except AssertionError as exc:
        print("RAISED", exc)
""")

REFUSALS = textwrap.dedent("""
    import sys, torch, triton, triton.language as tl
    import triton_backend_sdk as tbs

    tbs.use("tinyc")

    @triton.jit
    def half_copy(X, Y, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(Y + offs, tl.load(X + offs) * 2)

    @triton.jit
    def atomic(X, Y, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.atomic_add(Y + offs, tl.load(X + offs))

    @triton.jit
    def early_return(X, n, BLOCK: tl.constexpr):
        if tl.program_id(0) >= n:
            return
        offs = tl.arange(0, BLOCK)
        tl.store(X + offs, tl.load(X + offs) + 1)

    cases = {
        "half": lambda: half_copy[(1,)](torch.ones(16, dtype=torch.float16), torch.empty(16, dtype=torch.float16), 16),
        "atomic": lambda: atomic[(1,)](torch.ones(16), torch.zeros(16), 16),
        "branch": lambda: early_return[(2,)](torch.ones(16), 1, 16),
    }
    fn = cases[sys.argv[1]]
    try:
        fn()
    except Exception as exc:
        print("REFUSED", type(exc).__name__, exc)
""")


@pytest.fixture(scope="module")
def tinyc_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    return example_python(tmp_path_factory.mktemp("tinyc_venv"), EXAMPLE)


def _script(tmp_path, text: str):
    path = tmp_path / "kernels.py"  # Triton reads a jit function's source from its file
    path.write_text(text)
    return str(path)


def test_tinyc_runs_kernels_against_torch(tinyc_python, tmp_path):
    r = run(tinyc_python, _script(tmp_path, KERNELS), TRITON_CACHE_DIR=str(tmp_path / "cache"))
    assert r.returncode == 0, r.stderr[-4000:]
    assert "TINYC OK" in r.stdout


def test_tinyc_raises_device_asserts_with_program_and_location(tinyc_python, tmp_path):
    r = run(tinyc_python, _script(tmp_path, ASSERTS), TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_DEBUG="1")
    assert r.returncode == 0, r.stderr[-4000:]
    assert "RAISED" in r.stdout, r.stdout
    assert "x too big" in r.stdout and "program (2, 0, 0)" in r.stdout and "kernels.py:" in r.stdout, r.stdout


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("half", ["UnsupportedDtypeError", "fp16", "supported_dtypes"]),
        ("atomic", ["LoweringError", "tt.atomic_rmw"]),
        ("branch", ["UnsupportedError", "branches between blocks"]),
    ],
)
def test_tinyc_refuses_what_it_cannot_compile_by_name(tinyc_python, tmp_path, case, words):
    r = run(tinyc_python, _script(tmp_path, REFUSALS), case, TRITON_CACHE_DIR=str(tmp_path / "cache"))
    assert r.returncode == 0, r.stderr[-4000:]
    assert "REFUSED" in r.stdout and all(w in r.stdout for w in words), r.stdout


def test_tinyc_names_a_c_compiler_that_does_not_run(tinyc_python, tmp_path):
    script = KERNELS.replace(
        "k = add[(triton.cdiv(n, 128),)](x, y, z, n, BLOCK=128)",
        "k = add[(1,)](x, y, z, n, BLOCK=128, cc='/nonexistent/cc')",
    )
    r = run(tinyc_python, _script(tmp_path, script), TRITON_CACHE_DIR=str(tmp_path / "cache"))
    assert r.returncode != 0
    assert "tinyc: the C compiler '/nonexistent/cc' does not run" in r.stderr, r.stderr[-3000:]


def test_tinyc_passes_the_conformance_slice_it_supports(tinyc_python, tmp_path):
    """The SDK's conformance suite on the example, as a vendor would run it: fp32 elementwise, reductions, shapes and
    the tutorials pass; what tinyc lacks is reported unsupported by name, never as a wrong result."""
    r = run(
        tinyc_python,
        "-m",
        "triton_backend_sdk.cli",
        "conformance",
        "--backend",
        "tinyc",
        "-k",
        "float32",
        "--quiet",
        TRITON_CACHE_DIR=str(tmp_path / "cache"),
    )
    lines = r.stdout.strip().splitlines()
    assert lines and lines[0].startswith("conformance: backend tinyc"), r.stdout[-3000:] + r.stderr[-3000:]
    passed, failed = int(lines[-1].split()[0]), int(lines[-1].split()[2])
    assert failed == 0 and passed > 200, lines[-1]
    assert r.returncode == 0
