"""torch.compile's CPU-Triton route on the SDK's backends: the "cpu" backend (a face of cpu_ref or opencl) and the
Inductor corpus (tests/inductor_corpus.py; the CI slice by default, all of it with TBS_INDUCTOR_CORPUS=1).

Registration is checked in fresh interpreters (Triton discovers backends once, at `import triton`): the face never
shadows another "cpu" backend, whichever order the entry points are read in, and never changes which driver Triton
picks by itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import inductor_corpus as corpus
import pytest
import torch
import triton
from triton.backends.compiler import GPUTarget

HERE = os.path.dirname(os.path.abspath(__file__))


def _python(code: str, *, env: dict[str, str] | None = None, path: list[str] | None = None, timeout: int = 300) -> dict:
    """Run `code` in a fresh interpreter; it prints one JSON line last."""
    e = {k: v for k, v in os.environ.items() if k not in ("TRITON_DEFAULT_BACKEND", "TRITON_SDK_CPU_BACKEND")}
    e.update(env or {})
    if path:
        e["PYTHONPATH"] = os.pathsep.join([*path, e.get("PYTHONPATH", "")])
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=e,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=HERE,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


_DESCRIBE = """
import json, triton
from triton.backends import backends
from triton.runtime import driver
cpu = backends.get("cpu")
face = getattr(cpu.compiler, "face_base", None) if cpu else None
print(json.dumps({
    "compiler": f"{cpu.compiler.__module__}.{cpu.compiler.__qualname__}" if cpu else None,
    "driver": f"{cpu.driver.__module__}.{cpu.driver.__qualname__}" if cpu else None,
    "base": face().name if face else None,
    "active": type(driver.active).__name__,
    "cpu_active": bool(cpu and cpu.driver.is_active()),
}))
"""


def test_cpu_is_a_face_of_cpu_ref_and_never_the_auto_selected_driver():
    got = _python(_DESCRIBE)
    assert got["base"] == "cpu_ref"
    assert got["compiler"].startswith("triton_backend_sdk.backends.cpu.compiler.")
    assert got["active"] == "CPURefDriver" and not got["cpu_active"]


def test_the_face_follows_TRITON_DEFAULT_BACKEND():
    got = _python(_DESCRIBE, env={"TRITON_DEFAULT_BACKEND": "opencl"})
    assert got["base"] == "opencl" and got["active"] == "OpenCLDriver" and not got["cpu_active"]
    got = _python(_DESCRIBE, env={"TRITON_SDK_CPU_BACKEND": "opencl"})
    assert got["base"] == "opencl" and got["active"] == "CPURefDriver"
    got = _python(_DESCRIBE, env={"TRITON_DEFAULT_BACKEND": "cpu"})
    assert got["base"] == "cpu_ref" and got["active"] == "CPUDriver" and got["cpu_active"]


def test_a_gpu_driver_stays_the_active_one():
    """On a GPU machine Triton's own driver is the one it picks: the face's driver is not active beside it."""
    got = _python(
        """
        import json, triton.backends.nvidia.driver as nv
        nv.CudaDriver.is_active = staticmethod(lambda: True)
        import triton
        from triton.backends import backends
        from triton.runtime import driver
        active = [n for n, b in backends.items() if b.driver.is_active()]
        print(json.dumps({"active": active}))
        """
    )
    assert got["active"] == ["nvidia"]


_FAKE_COMPILER = """
from triton.backends.compiler import BaseBackend

class RealCPUBackend(BaseBackend):
    @staticmethod
    def supports_target(target):
        return target.backend == "cpu"
    def hash(self): return "real"
    def parse_options(self, options): return None
    def add_stages(self, stages, options, language=None): pass
    def load_dialects(self, context): pass
    def get_module_map(self): return {}
    def pack_metadata(self, metadata): return ()
    def get_codegen_implementation(self, options): return {}
"""
_FAKE_DRIVER = """
from triton.backends.driver import DriverBase

class RealCPUDriver(DriverBase):
    @classmethod
    def is_active(cls): return False
    def map_python_to_cpp_type(self, ty): return ty
    def get_current_target(self): return None
    def get_active_torch_device(self): return None
    def get_benchmarker(self): return None
"""


def _fake_package(root, name: str) -> None:
    pkg = root / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "compiler.py").write_text(_FAKE_COMPILER)
    (pkg / "driver.py").write_text(_FAKE_DRIVER)


#: Triton's discovery with a given order of its entry points (the order importlib.metadata returns depends on
#: sys.path and the file system): `FIRST` lists names to put first
_ORDERED = """
import importlib.metadata as md
_eps = md.entry_points
class _Ordered:
    def select(self, **kw):
        eps = list(_eps(**kw))
        if kw.get("group") == "triton.backends":
            extra = [md.EntryPoint(n, v, "triton.backends") for n, v in EXTRA]
            eps = sorted(eps + extra, key=lambda e: (e.value not in FIRST, ))
        return md.EntryPoints(eps)
md.entry_points = lambda **kw: _Ordered().select(**kw) if kw else _Ordered()
"""


@pytest.mark.parametrize("ours_first", [True, False])
def test_a_triton_cpu_build_wins(tmp_path, ours_first):
    """triton-cpu's backend lives at `triton.backends.cpu` (and its wheel registers it as "cpu"): it is the one
    registered, whether Triton reads our entry point before or after its own."""
    _fake_package(tmp_path / "overlay", "cpu")
    first = "triton_backend_sdk.backends.cpu" if ours_first else "triton.backends.cpu"
    prelude = f"""
import importlib.abc, importlib.util, sys
class _Overlay(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "triton.backends.cpu" or fullname.startswith("triton.backends.cpu."):
            rest = fullname.split(".")[3:]
            base = {str(tmp_path / "overlay" / "cpu")!r}
            loc = base + "/__init__.py" if not rest else base + "/" + rest[0] + ".py"
            return importlib.util.spec_from_file_location(fullname, loc,
                submodule_search_locations=[base] if not rest else None)
        return None
sys.meta_path.insert(0, _Overlay())
EXTRA = [("cpu", "triton.backends.cpu")]
FIRST = [{first!r}]
"""
    got = _python(prelude + _ORDERED + _DESCRIBE)
    assert got["compiler"] == "triton.backends.cpu.compiler.RealCPUBackend"
    assert got["driver"] == "triton.backends.cpu.driver.RealCPUDriver"
    assert got["active"] == "CPURefDriver"


@pytest.mark.parametrize("ours_first", [True, False])
def test_another_packages_cpu_entry_point_wins(tmp_path, ours_first):
    _fake_package(tmp_path, "other_cpu")
    dist = tmp_path / "other_cpu-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: other-cpu\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[triton.backends]\ncpu = other_cpu\n")
    first = "triton_backend_sdk.backends.cpu" if ours_first else "other_cpu"
    got = _python(f"EXTRA = []\nFIRST = [{first!r}]\n" + _ORDERED + _DESCRIBE, path=[str(tmp_path)])
    assert got["compiler"] == "other_cpu.compiler.RealCPUBackend"
    assert got["driver"] == "other_cpu.driver.RealCPUDriver"


def test_the_face_compiles_for_inductors_target():
    """GPUTarget("cpu", "", 32) is what Inductor asks for: the empty arch means this machine; the descriptor and
    the cache key are the face's own, the code cpu_ref's."""
    from triton.backends import backends
    from triton.compiler.compiler import make_backend
    from triton_backend_sdk.backends import cpu
    from triton_backend_sdk.backends.cpu_ref.compiler import CPURefBackend

    compiler, _ = cpu.face("triton_backend_sdk.backends.cpu_ref")
    assert "cpu" in backends and compiler.face_base() is CPURefBackend
    b = compiler(GPUTarget("cpu", "", 32))
    host = CPURefBackend.describe(None)
    assert b.descriptor.name == "cpu" and b.descriptor.arch == host.arch and b.descriptor.features == host.features
    assert b.hash() != CPURefBackend(host.gpu_target()).hash()
    assert compiler(GPUTarget("cpu", host.arch, 1)).descriptor == b.descriptor
    assert type(make_backend(GPUTarget("cpu", "", 32))).face_base().name in ("cpu_ref", "opencl")


def test_a_kernel_of_the_other_face_is_refused_by_name(monkeypatch):
    """cpu_ref's and opencl's faces share the name "cpu": a binary of one is never loaded by the other's driver."""
    reason = corpus_unavailable("opencl")
    if reason:
        pytest.skip(reason)
    from triton.backends import Backend, backends
    from triton.compiler import ASTSource
    from triton_backend_sdk.backends import cpu
    from triton_backend_sdk.demo import add_kernel
    from triton_backend_sdk.errors import ToolError

    _, ocl_driver = cpu.face("triton_backend_sdk.backends.opencl")
    monkeypatch.setitem(backends, "cpu", Backend(*cpu.face("triton_backend_sdk.backends.cpu_ref")))
    src = ASTSource(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64})
    k = triton.compile(src, target=GPUTarget("cpu", "", 32))
    assert k.metadata.sdk_face_of == "cpu_ref"
    with pytest.raises(ToolError, match="compiled by the cpu_ref face of 'cpu'.*opencl face"):
        ocl_driver().launcher_cls(k.src, k.metadata)


def test_a_kernel_launched_before_the_face_runs_under_it():
    """Liger-Kernel's tests run a kernel eagerly (compiled for cpu_ref), then `torch.compile` activates the "cpu"
    face: Triton keeps the target a JIT function first compiled for per device index, so a new specialization is
    compiled for cpu_ref and first launched by the face's driver, which runs it (it was refused as another
    backend's); and the other way round."""
    out = _python(
        """
        import json, torch, triton
        from triton.backends import backends
        from triton.runtime import driver
        from triton_backend_sdk.demo import add_kernel, axpb_kernel
        x, y = torch.randn(1000), torch.randn(1000)
        ok = []
        for step, block in (("cpu_ref", 64), ("face", 128), ("cpu_ref again", 256)):
            if step == "face":
                driver.set_active(backends["cpu"].driver())
            elif step == "cpu_ref again":
                driver.reset_active()
            y = torch.randn(1000)
            o = torch.full((1000,), float("nan"))
            add_kernel[(triton.cdiv(1000, block),)](x, y, o, 1000, BLOCK=block)
            ok.append([step, type(driver.active).__name__, torch.equal(o, x + y)])
        # the other way round: first compiled under the face, a new specialization launched by cpu_ref's driver
        driver.set_active(backends["cpu"].driver())
        for step, block in (("face first", 64), ("cpu_ref after", 128)):
            o = torch.full((1000,), float("nan"))
            axpb_kernel[(triton.cdiv(1000, block),)](x, o, 2.0, 0.5, 1000, BLOCK=block)
            ok.append([step, type(driver.active).__name__, torch.allclose(o, 2.0 * x + 0.5)])
            driver.reset_active()
        print(json.dumps(ok))
        """
    )
    assert [(step, good) for step, _, good in out] == [
        ("cpu_ref", True),
        ("face", True),
        ("cpu_ref again", True),
        ("face first", True),
        ("cpu_ref after", True),
    ]
    assert out[1][1] != out[0][1]


def test_use_refuses_what_is_not_an_sdk_backend():
    from triton_backend_sdk.backends import cpu
    from triton_backend_sdk.errors import ToolError

    for name in ("nvidia", "cpu", "nope"):
        with pytest.raises(ToolError, match="not an SDK backend"):
            cpu.use(name)


def corpus_unavailable(name: str) -> str | None:
    from conftest import _unavailable

    return _unavailable(name)


_ONLY_STEP = """
import json, torch, triton
torch._inductor.config.cpu_backend = "triton"
from torch._inductor import metrics

def f(x, w):
    return torch.nn.functional.layer_norm(torch.nn.functional.gelu(x * w), (x.shape[-1],)).softmax(-1)

x, w = torch.randn(33, 200), torch.randn(200)
got = torch.compile(f)(x, w)
active = triton.runtime.driver.active
print(json.dumps({"err": (got - f(x, w)).abs().max().item(), "kernels": metrics.generated_kernel_count,
                  "driver": repr(active)}))
"""


@pytest.mark.parametrize("base", ["cpu_ref", "opencl"])
def test_cpu_backend_triton_is_the_only_step(base):
    """The supported use, as a user writes it: only `cpu_backend = "triton"` (opencl: with TRITON_DEFAULT_BACKEND=
    opencl). cpu_ref's run keeps Inductor's defaults, compile workers included (they pick the face at their own
    `import triton`); opencl's compiles in-process unless the full corpus is asked for (workers cost ~30 s here)."""
    if corpus_unavailable(base):
        pytest.skip(corpus_unavailable(base))
    env = {"TRITON_DEFAULT_BACKEND": "opencl"} if base == "opencl" else {}
    if base == "opencl" and os.environ.get(corpus.FULL_ENV, "") in ("", "0"):
        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    got = _python(_ONLY_STEP, env=env, timeout=600)
    assert got["kernels"] > 0 and got["err"] < 1e-5
    assert f"'cpu': {base} face" in got["driver"]


# ---- the corpus -------------------------------------------------------------------------------------------------


def test_the_comparison_catches_what_eager_does_not_do():
    """The corpus's tolerance is eager's own error against fp64 (times 4) plus a floor: a result off by more, a NaN
    eager has not, or a changed integer is a failure; low-precision rounding eager also has is not."""
    ref = torch.linspace(-3, 3, 1000, dtype=torch.float64)
    eager32 = ref.float()
    assert corpus.compare([eager32 + 1e-7], [eager32], [ref], torch.float32) is None
    assert "max error" in corpus.compare([eager32 + 1e-3], [eager32], [ref], torch.float32)
    bf = ref.to(torch.bfloat16)
    assert corpus.compare([(ref * (1 + 2**-9)).to(torch.bfloat16)], [bf], [ref], torch.bfloat16) is None
    assert "max error" in corpus.compare([(ref * 1.05).to(torch.bfloat16)], [bf], [ref], torch.bfloat16)
    nan = eager32.clone()
    nan[3] = float("nan")
    assert "non-finite" in corpus.compare([nan], [eager32], [ref], torch.float32)
    ints = torch.arange(10)
    assert "differ from eager" in corpus.compare([ints + (ints == 4)], [ints], [ints], torch.float32)


@pytest.fixture
def cpu_face(backend: str, request: pytest.FixtureRequest):
    """The "cpu" face of the `backend` fixture's SDK backend for the test, the previous face restored after."""
    from triton.backends import backends
    from triton_backend_sdk.backends import cpu

    saved, env = backends["cpu"].compiler.face_base().name, os.environ.get(cpu.BASE_ENV)
    cpu.use(backend)
    yield backend
    cpu.use(saved)  # drops what Inductor loaded for this face when it changes back
    if env is None:
        os.environ.pop(cpu.BASE_ENV, None)
    else:
        os.environ[cpu.BASE_ENV] = env
    torch._dynamo.reset()


def _corpus_params() -> list:
    """The selected workloads; one whose failure is known to be torch's (corpus.KNOWN_CAUSES) is a strict xfail,
    so that a torch that fixes it shows up."""
    params = []
    for w in corpus.selected():
        marks = [pytest.mark.timeout(w.timeout)]
        if w.name in corpus.KNOWN_CAUSES:
            marks.append(pytest.mark.xfail(strict=True, reason=corpus.KNOWN_CAUSES[w.name]))
        params.append(pytest.param(w, id=w.name, marks=marks))
    return params


@pytest.mark.parametrize("workload", _corpus_params())
def test_corpus(workload: corpus.Workload, cpu_face: str, request: pytest.FixtureRequest):
    variant = request.node.callspec.params.get("backend") in corpus_variants()
    if variant and (workload.name not in corpus.CI or os.environ.get(corpus.FULL_ENV, "") in ("", "0")):
        pytest.skip(f"execution-model variants run the CI slice, and only with {corpus.FULL_ENV}=1")
    why = corpus.run(workload)
    assert why is None, why


def corpus_variants() -> set[str]:
    from conftest import VARIANTS

    return set(VARIANTS)
