"""Driver activation, the target helper, import hygiene, and what do_bench/autotune need from the driver."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
import triton
import triton.language as tl
import triton_backend_sdk
from triton_backend_sdk.backends.cpu_ref.driver import CPURefDriver
from triton_backend_sdk.demo import add_kernel


def _run(code: str, **env: str) -> str:
    e = {k: v for k, v in os.environ.items() if k != "TRITON_DEFAULT_BACKEND"}
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, check=True).stdout


def test_cpu_ref_is_the_active_driver_without_configuration():
    out = _run("import triton; print(type(triton.runtime.driver.active).__name__)")
    assert out.strip() == "CPURefDriver"


def test_explicit_selection():
    out = _run("import triton; print(type(triton.runtime.driver.active).__name__)", TRITON_DEFAULT_BACKEND="cpu_ref")
    assert out.strip() == "CPURefDriver"


def test_importing_backends_pulls_in_no_heavy_modules():
    """Triton imports our compiler/driver modules during `import triton`: they must not load llvmlite or torch."""
    out = _run(
        "import sys, triton; from triton.backends import backends; assert 'cpu_ref' in backends; "
        "print(sorted(m for m in ('llvmlite', 'torch', 'pyopencl') if m in sys.modules))"
    )
    assert out.strip() == "[]"


def test_never_active_where_a_gpu_driver_is(monkeypatch):
    from triton.backends import backends
    from triton_backend_sdk.driver import SDKDriver

    others = [b for b in backends.values() if not issubclass(b.driver, SDKDriver)]
    assert others, "stock Triton registers its GPU backends"
    monkeypatch.delenv("TRITON_DEFAULT_BACKEND", raising=False)
    monkeypatch.setattr(others[0].driver, "is_active", staticmethod(lambda: True))
    assert not CPURefDriver.is_active()
    monkeypatch.setenv("TRITON_DEFAULT_BACKEND", "cpu_ref")
    assert CPURefDriver.is_active()


def test_a_broken_foreign_driver_does_not_break_activation(monkeypatch):
    from triton.backends import backends

    def boom() -> bool:
        raise OSError("driver library is broken")

    from triton_backend_sdk.driver import SDKDriver

    other = next(b for b in backends.values() if not issubclass(b.driver, SDKDriver))
    monkeypatch.delenv("TRITON_DEFAULT_BACKEND", raising=False)
    monkeypatch.setattr(other.driver, "is_active", staticmethod(boom))
    assert CPURefDriver.is_active()


def test_target_helper():
    t = triton_backend_sdk.target("cpu_ref")
    assert t.backend == "cpu_ref" and t.warp_size == 1 and isinstance(t.arch, str) and t.arch
    with pytest.raises(KeyError, match="no Triton backend named 'nope'"):
        triton_backend_sdk.target("nope")


def test_driver_answers_what_the_runtime_asks(backend):
    drv = triton.runtime.driver.active
    assert drv.get_current_device() == 0
    assert drv.get_current_stream(0) == 0
    assert drv.get_active_torch_device() == torch.device("cpu")
    props = drv.utils.get_device_properties(0)
    assert props["multiprocessor_count"] >= 1
    assert drv.get_current_target().backend == backend
    assert drv.map_python_to_cpp_type("*fp32") == "void*"
    assert drv.map_python_to_cpp_type("i64") == "int64_t"


def test_do_bench_times_a_kernel(backend):
    n = 1 << 16
    x, y = torch.rand(n), torch.rand(n)
    out = torch.empty_like(x)
    ms = triton.testing.do_bench(lambda: add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024), warmup=1, rep=5)
    assert ms > 0
    torch.testing.assert_close(out, x + y)


@triton.autotune(
    configs=[triton.Config({"BLOCK": 128}, num_warps=1), triton.Config({"BLOCK": 512}, num_warps=4)], key=["n"]
)
@triton.jit
def tuned_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3, mask=mask)


def test_autotune(backend, rng):
    n = 5003
    x = torch.randn(n, generator=rng)
    out = torch.empty_like(x)
    tuned_scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    torch.testing.assert_close(out, x * 3)
    assert tuned_scale_kernel.best_config.kwargs["BLOCK"] in (128, 512)


def test_kernel_of_another_backend_is_refused_by_name(tmp_path):
    """A CompiledKernel made while cpu_ref was active, launched with opencl active: a named refusal, not an error
    from inside the other backend's loader."""
    from triton.runtime import driver
    from triton_backend_sdk.errors import ToolError

    pytest.importorskip("pyopencl")
    previous = driver.active
    try:
        triton_backend_sdk.use("cpu_ref")
        sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
        src = triton.compiler.ASTSource(fn=add_kernel, signature=sig, constexprs={"BLOCK": 64})
        compiled = triton.compile(src, target=triton_backend_sdk.target("cpu_ref"))
        x = torch.randn(64)
        out = torch.empty_like(x)
        compiled[(1, 1, 1)](x, x, out, 64, 64)
        torch.testing.assert_close(out, 2 * x)
        triton_backend_sdk.use("opencl")
        fresh = type(compiled)(compiled.src, compiled.metadata_group, compiled.hash)
        with pytest.raises(ToolError, match=r"compiled for 'cpu_ref'.*active driver is 'opencl'"):
            fresh[(1, 1, 1)](x, x, out, 64, 64)
    finally:
        driver.set_active(previous)


def test_a_driver_whose_compiler_class_is_another_backend_is_refused():
    """The vendor guide's step 5 without `compiler_class()`: the driver ran every kernel as cpu_ref, silently."""
    from triton_backend_sdk.errors import ToolError

    class AcmeDriver(CPURefDriver):
        backend_name = "tsdk_acme"

    with pytest.raises(ToolError, match=r"AcmeDriver is for backend 'tsdk_acme'.*CPURefBackend, backend 'cpu_ref'"):
        AcmeDriver().get_current_target()
    assert CPURefDriver().get_current_target().backend == "cpu_ref"
