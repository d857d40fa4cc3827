"""Which side is wrong when an upstream dot test fails by one element: our result or the test's torch reference?

Runs the given upstream test ids on a backend with two wrappers installed in the pytest process: `torch.matmul`
records the exact (float64) product of every 2-D fp16/bf16 matmul the test makes for its reference, and
`torch.testing.assert_close` compares, for every element outside the test's tolerance, our value and the
reference's against that exact value, in ulps of the output dtype. The test's own verdict is unchanged.

    .venv/bin/python tools/check_upstream_reference.py --triton-src /work/.mirror/lightseekorg+triton/repo \\
        --rev f4fca2c0b --backend cpu_ref --ids "test_scaled_dot[64-64-64-False-False-False-e4m3-e4m3-4-16-1]" ...

The output (one block per test) is what backends/*/upstream_expectations.txt cites for `inexact-reference` entries
(benchmarks/results/upstream/reference_checks.txt).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PLUGIN = """
import math, os, torch

_matmul, _close = torch.matmul, torch.testing.assert_close
_exact = []


def _ulp(x, dtype):
    m = {torch.bfloat16: 8, torch.float16: 11, torch.float32: 24}[dtype]
    e = math.frexp(abs(x) or 2.0 ** -126)[1]
    return 2.0 ** (e - m)


def matmul(a, b, *args, **kw):
    if a.dim() == 2 and a.dtype in (torch.bfloat16, torch.float16):
        _exact.append((a.double(), b.double()))
    return _matmul(a, b, *args, **kw)


def assert_close(actual, expected, *args, rtol=None, atol=None, **kw):
    if _exact and actual.is_floating_point() and actual.shape == (_exact[-1][0].shape[0], _exact[-1][1].shape[1]):
        a, b = _exact[-1]
        exact, ours, ref = a @ b, actual.double().cpu(), expected.double().cpu()
        bad = ((ours - ref).abs() > (atol or 0) + (rtol or 0) * ref.abs()).nonzero().tolist()
        with open(os.environ["SDK_REFERENCE_REPORT"], "a") as f:
            f.write(f"{os.environ.get('PYTEST_CURRENT_TEST', '?').split(' ')[0]}: {len(bad)} element(s) outside "
                    f"rtol={rtol} atol={atol}\\n")
            for i, j in bad[:8]:
                x, o, r = exact[i, j].item(), ours[i, j].item(), ref[i, j].item()
                u = _ulp(x, actual.dtype)
                f.write(f"  [{i},{j}] exact {x!r}: ours {o!r} ({(o - x) / u:+.2f} ulp), reference {r!r} "
                        f"({(r - x) / u:+.2f} ulp); sum of |products| {(a[i] * b[:, j]).abs().sum().item():.6g} "
                        f"(one fp32 ulp there: {_ulp((a[i] * b[:, j]).abs().sum().item(), torch.float32):.3g})\\n")
                if actual.dtype == torch.float16:
                    ub = _ulp(x, torch.bfloat16)
                    f.write(f"    in bf16 ulps (a kernel that stores c.to(tl.bfloat16) into fp16): ours "
                            f"{(o - x) / ub:+.2f}, reference {(r - x) / ub:+.2f}\\n")
            rounded = exact.to(actual.dtype).double()
            f.write(f"  ours == exact rounded to {actual.dtype}: {(ours == rounded).double().mean().item():.4%}; "
                    f"reference == exact rounded: {(ref == rounded).double().mean().item():.4%}\\n")
            if actual.dtype == torch.float16:  # test_scaled_dot's kernel rounds to bf16 before its fp16 store
                twice = exact.to(torch.bfloat16).to(torch.float16).double()
                f.write(f"  ours == exact rounded to torch.bfloat16, then torch.float16: "
                        f"{(ours == twice).double().mean().item():.4%}; reference: "
                        f"{(ref == twice).double().mean().item():.4%}\\n")
    return _close(actual, expected, *args, rtol=rtol, atol=atol, **kw)


torch.matmul = matmul
torch.testing.assert_close = assert_close
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--triton-src", required=True)
    p.add_argument("--rev", default=None)
    p.add_argument("--backend", required=True)
    p.add_argument("--ids", nargs="+", required=True, help="test ids in test_core.py")
    p.add_argument("--out", default=None, help="append the report here (default: print it)")
    a = p.parse_args()
    from triton_backend_sdk.upstream.staging import stage

    work = Path(tempfile.mkdtemp(prefix="sdk-refcheck-"))
    cwd, paths, info = stage(a.triton_src, work / "src", ("test_core.py",), a.rev)
    (cwd / "_sdk_refcheck.py").write_text(PLUGIN)
    report = work / "report.txt"
    env = dict(
        os.environ,
        TRITON_DEFAULT_BACKEND=a.backend,
        TRITON_CACHE_DIR=str(work / "cache"),
        SDK_REFERENCE_REPORT=str(report),
    )
    ids = [f"{paths[0]}::{i}" for i in a.ids]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "_sdk_refcheck",
            "--device",
            "cpu",
            *ids,
        ],
        cwd=cwd,
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
    )
    text = f"# {a.backend}, suite {info.commit[:9]} (version {info.version})\n" + report.read_text()
    if a.out:
        with open(a.out, "a") as f:
            f.write(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
