"""The example vendor backend (examples/acme_backend), installed with pip into a throwaway venv (example_venv.py)."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest
from example_venv import example_python, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "acme_backend")

SMOKE = textwrap.dedent("""
    import torch, triton, triton.language as tl
    from triton.runtime import driver
    from acme_backend.plugin import sqplus1

    @triton.jit
    def div_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask, other=1.0)
        tl.store(out_ptr + offs, sqplus1(x) / y, mask=mask)

    assert type(driver.active).__name__ == "AcmeDriver", type(driver.active)
    g = torch.Generator().manual_seed(7)
    n = 1000
    x = torch.randn(n, generator=g)
    y = torch.rand(n, generator=g) + 0.5
    out = torch.empty_like(x)
    k = div_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    torch.testing.assert_close(out, (x * x + 1) / y)
    assert k.metadata.target.backend == "acme"
    assert k.metadata.acme_recip_div == 1, k.metadata
    assert "acme.recip" in k.asm["sdkir"] and "acme.sqplus1" in k.asm["sdkir"]
    assert "arith.divf" not in k.asm["sdkir"]
    print("ACME OK")
""")


@pytest.fixture(scope="module")
def acme_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    return example_python(tmp_path_factory.mktemp("acme_venv"), EXAMPLE)


def test_example_is_under_200_lines():
    total = 0
    for dirpath, _, files in os.walk(os.path.join(EXAMPLE, "acme_backend")):
        for f in files:
            if f.endswith(".py"):
                with open(os.path.join(dirpath, f)) as fh:
                    total += sum(1 for line in fh if line.strip())
    assert total < 200, f"the example backend has {total} non-blank lines"


def test_acme_backend_selected_by_environment_runs_kernels(acme_python, tmp_path):
    script = tmp_path / "smoke.py"  # Triton reads a jit function's source from its file
    script.write_text(SMOKE)
    r = run(acme_python, str(script), TRITON_DEFAULT_BACKEND="acme", TRITON_CACHE_DIR=str(tmp_path / "cache"))
    assert r.returncode == 0, r.stderr[-4000:]
    assert "ACME OK" in r.stdout


def test_acme_is_listed_with_versions_and_origin(acme_python):
    r = run(acme_python, "-m", "triton_backend_sdk.cli", "plugins")
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert any(
        ln.split()[:3] == ["backend", "acme", "0.1.0"] and "api 1-1" in ln and "acme-triton-backend 0.1.0" in ln
        for ln in lines
    ), r.stdout
    assert any(ln.split()[:3] == ["plugin", "acme_math", "0.1.0"] and "api 1-1" in ln for ln in lines), r.stdout


def test_acme_does_not_change_the_default_driver(acme_python):
    r = run(
        acme_python,
        "-c",
        "import triton; print(type(triton.runtime.driver.active).__name__)",
        TRITON_DEFAULT_BACKEND="",
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "CPURefDriver"


if sys.platform != "linux":  # the venv layout above is POSIX's
    pytestmark = pytest.mark.skip(reason="the example smoke test builds a POSIX venv")


def test_conformance_runner_runs_the_vendor_backend_unchanged(acme_python, tmp_path):
    """Issue 6: a vendor's backend goes through `triton-sdk conformance` as it is (a slice of the suite here)."""
    r = run(
        acme_python,
        "-m",
        "triton_backend_sdk.cli",
        "conformance",
        "--backend",
        "acme",
        "--reference",
        "cuda-golden",
        "-k",
        "float32",
        "--quiet",
        TRITON_CACHE_DIR=str(tmp_path / "cache"),
    )
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith("conformance: backend acme, reference cuda-golden"), r.stdout[-3000:] + r.stderr
    passed, failed = int(lines[-1].split()[0]), int(lines[-1].split()[2])
    assert lines[-1] == f"{passed} passed, {failed} failed, 0 unsupported" and passed > 50, lines[-1]
    # acme trades division accuracy for speed (x/y -> x*recip(y)); the runner must report exactly those cases
    failing = {line.split()[1].split("[")[0] for line in lines if line.startswith("FAIL ")}
    assert failing <= {"binary_truediv", "math_fdiv"}, failing
    assert (r.returncode == 0) == (failed == 0)
