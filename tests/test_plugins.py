"""Plugins: Python passes with typed options, custom ops, the registry and API checks, cache identity, and Triton's
own C++ plugin passes (the wheel's test library, whose pass renames the kernel function to `foo`)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass

import pytest
import torch
import triton
import triton.language as tl
import triton_backend_sdk
from triton.compiler import ASTSource
from triton_backend_sdk import cli, plugins
from triton_backend_sdk.custom_ops import custom_op
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import parse_ttir
from triton_backend_sdk.ir.core import Module
from triton_backend_sdk.ir.types import IntType
from triton_backend_sdk.pipeline import PassContext, TritonPass, inject, ir_pass, remove_injection
from triton_backend_sdk.plugins import Plugin, PluginError

TRITON_TEST_PLUGIN = os.path.join(os.path.dirname(triton.__file__), "plugins", "libTritonPluginsTestLib.so")

# ---- kernels -------------------------------------------------------------------------------------------------------


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


sqplus1 = custom_op("tsdktest.sqplus1", {("fp32",): "fp32"}, doc="x * x + 1")


@sqplus1.lowering("cpu_ref")
def _sqplus1_cpu(ctx, op) -> None:  # type: ignore[no-untyped-def]
    from llvmlite import ir
    from triton_backend_sdk.backends.cpu_ref.codegen.elementwise import lift

    lift(ctx, op, lambda a: ctx.b.fadd(ctx.b.fmul(a, a), ir.Constant(a.type, 1.0)))


@triton.jit
def sqplus1_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, sqplus1(tl.load(x_ptr + offs, mask=mask)), mask=mask)


def _add_src(block: int = 128) -> ASTSource:
    return ASTSource(
        add_kernel,
        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": block},
    )


# ---- passes --------------------------------------------------------------------------------------------------------


@ir_pass(name="test-swap-add")
class SwapAdd:
    """arith.addf -> `into` (subf or mulf): a visible rewrite whose typed option changes the result."""

    into: str = "sub"

    def run(self, module: Module, ctx: PassContext) -> None:
        cls = {"sub": O.SubF, "mul": O.MulF}[self.into]
        for op in list(module.walk()):
            if isinstance(op, O.AddF):
                new = cls(list(op.operands), [op.result.type], loc=op.loc)
                op.parent.insert(op.parent.ops.index(op), new)
                op.result.replace_all_uses_with(new.result)
                op.erase()


@dataclass(frozen=True)
class CountOptions:
    key: str = "n_ops"


@ir_pass(name="test-count-ops", options=CountOptions)
def count_ops(module: Module, ctx: PassContext, opts: CountOptions) -> None:
    """Records the number of ops in the kernel's metadata (a function pass with typed options)."""
    ctx.metadata[opts.key] = sum(1 for _ in module.walk())


def test_ir_pass_decorator_makes_frozen_typed_passes():
    p = SwapAdd(into="mul")
    assert p.name == "test-swap-add" and p.into == "mul"
    with pytest.raises(Exception, match="cannot assign"):
        p.into = "sub"  # type: ignore[misc]
    c = count_ops(key="k")
    assert c.name == "test-count-ops" and c.opts == CountOptions("k")
    with pytest.raises(TypeError, match="no option|unexpected keyword"):
        count_ops(bogus=1)
    with pytest.raises(TypeError, match=r"pass 'test-swap-add': option into must be str, got int 3"):
        SwapAdd(into=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"pass 'test-count-ops': option key must be str, got NoneType"):
        count_ops(key=None)
    with pytest.raises(TypeError, match="frozen"):

        @ir_pass(name="x", options=type("NotFrozen", (), {}))
        def _bad(module, ctx, opts):  # type: ignore[no-untyped-def]
            pass


@pytest.mark.parametrize("into,ref", [("sub", torch.sub), ("mul", torch.mul)])
def test_decorated_pass_options_change_kernel_and_cache_key(backend, rng, into, ref):
    n = 300
    x, y = torch.randn(n, generator=rng), torch.randn(n, generator=rng)
    out = torch.empty_like(x)
    target = triton_backend_sdk.target(backend)
    plain = triton.compile(_add_src(), target=target)
    inj = inject("after-pass:sdk-custom-ops", SwapAdd(into=into), backends=backend)
    counter = inject("after:sdkir", count_ops(key="ops_after_sdkir"), backends=backend)
    try:
        k = triton.compile(_add_src(), target=target)
        assert k.hash != plain.hash
        assert k.metadata.ops_after_sdkir > 5
        k[(3, 1, 1)](x, y, out, n, 128)
        torch.testing.assert_close(out, ref(x, y))
    finally:
        remove_injection(inj)
        remove_injection(counter)


def test_jit_in_memory_cache_sees_a_plugin_activated_mid_process(backend, rng):
    """Triton's in-memory kernel cache keys on specialization+options only; activation drops it (plugins.invalidate)."""
    n = 200
    x, y = torch.randn(n, generator=rng), torch.randn(n, generator=rng)
    out = torch.empty_like(x)
    add_kernel[(2,)](x, y, out, n, BLOCK=128)
    torch.testing.assert_close(out, x + y)
    plugins.activate(
        Plugin(
            "tsdktest-swap", "1.0", passes=(("after-pass:sdk-custom-ops", SwapAdd(into="sub")),), backends=(backend,)
        )
    )
    try:
        add_kernel[(2,)](x, y, out, n, BLOCK=128)
        torch.testing.assert_close(out, x - y)
    finally:
        plugins.deactivate("tsdktest-swap")
    add_kernel[(2,)](x, y, out, n, BLOCK=128)
    torch.testing.assert_close(out, x + y)


# ---- custom ops ----------------------------------------------------------------------------------------------------


def test_custom_op_runs_on_cpu_ref(rng):
    n = 1000
    x = torch.randn(n, generator=rng)
    out = torch.empty_like(x)
    k = triton.compile(
        ASTSource(
            sqplus1_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 256}
        ),
        target=triton_backend_sdk.target("cpu_ref"),
    )
    assert "tsdktest.sqplus1" in k.asm["sdkir"] and "tt.extern_elementwise" not in k.asm["sdkir"]
    reread = parse_ttir(k.asm["sdkir"])  # the printed custom op reads back as its class (CLI recompiles of dumps)
    assert any(isinstance(op, sqplus1.op) for op in reread.walk())
    k[(4, 1, 1)](x, out, n, 256)
    torch.testing.assert_close(out, x * x + 1)


def test_custom_op_on_opencl_uses_the_opencl_rule(rng):
    from triton.backends import backends

    if "opencl" not in backends:
        pytest.skip(
            "the opencl backend is not registered with Triton yet (backends/opencl is being built); "
            "the cpu_ref half runs in test_custom_op_runs_on_cpu_ref"
        )
    from triton_backend_sdk.backends.opencl.render.elementwise import lift

    @sqplus1.lowering("opencl")  # OpenCL C text instead of LLVM IR: one fma per element
    def _sqplus1_cl(ctx, op):  # type: ignore[no-untyped-def]
        lift(ctx, op, lambda a: f"fma({a}, {a}, 1.0f)")

    n = 500
    x = torch.randn(n, generator=rng)
    out = torch.empty_like(x)
    k = triton.compile(
        ASTSource(
            sqplus1_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 128}
        ),
        target=triton_backend_sdk.target("opencl"),
    )
    assert any("fma(" in v for v in k.asm.values() if isinstance(v, str)), "the OpenCL rule was not used"
    from triton.runtime import driver

    previous = driver.active
    triton_backend_sdk.use("opencl")
    try:
        k[(4, 1, 1)](x, out, n, 128)
    finally:
        driver.set_active(previous)
    torch.testing.assert_close(out, x * x + 1)


def test_custom_op_without_a_rule_names_the_op_and_backend():
    lonely = custom_op("tsdktest.lonely", {("fp32",): "fp32"})

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, lonely(tl.load(x_ptr + offs)))

    with pytest.raises(UnsupportedError, match=r"\[cpu_ref\] no lowering rule for op 'tsdktest\.lonely'"):
        triton.compile(
            ASTSource(k, {"x_ptr": "*fp32", "BLOCK": "constexpr"}, {"BLOCK": 16}),
            target=triton_backend_sdk.target("cpu_ref"),
        )


def test_custom_op_names_are_checked():
    with pytest.raises(ValueError, match="dotted"):
        custom_op("nodot", {("fp32",): "fp32"})
    with pytest.raises(ValueError, match="built-in"):
        custom_op("arith.addf", {("fp32",): "fp32"})


divmod_op = custom_op(
    "tsdktest.divmod",
    {("int32", "int32"): ("int32", "int32"), ("fp32", "fp32"): ("fp32", "fp32")},
    doc="(a / b, a % b)",
)
plus_op = custom_op("tsdktest.plus", {("fp32", "fp32"): "fp32"}, doc="a + b, a reduction's combine")


@divmod_op.lowering("cpu_ref")
def _divmod_cpu(ctx, op) -> None:  # type: ignore[no-untyped-def]
    from triton_backend_sdk.backends.cpu_ref.codegen.elementwise import lift_each

    is_int = isinstance(op.operands[0].type.element, IntType)
    b = ctx.b
    lift_each(ctx, op, lambda x, y: (b.sdiv(x, y), b.srem(x, y)) if is_int else (b.fdiv(x, y), b.frem(x, y)))


@divmod_op.lowering("opencl")
def _divmod_cl(ctx, op) -> None:  # type: ignore[no-untyped-def]
    from triton_backend_sdk.backends.opencl.render.elementwise import lift_each

    is_int = isinstance(op.operands[0].type.element, IntType)
    lift_each(ctx, op, lambda x, y: (f"({x} / {y})", f"({x} % {y})" if is_int else f"fmod({x}, {y})"))


@plus_op.lowering("cpu_ref")
def _plus_cpu(ctx, op) -> None:  # type: ignore[no-untyped-def]
    from triton_backend_sdk.backends.cpu_ref.codegen.elementwise import lift

    lift(ctx, op, lambda x, y: ctx.b.fadd(x, y))


@plus_op.lowering("opencl")
def _plus_cl(ctx, op) -> None:  # type: ignore[no-untyped-def]
    from triton_backend_sdk.backends.opencl.render.elementwise import lift

    lift(ctx, op, lambda x, y: f"({x} + {y})")


@triton.jit
def divmod_kernel(x_ptr, y_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    q, r = divmod_op(tl.load(x_ptr + offs, mask=m), tl.load(y_ptr + offs, mask=m, other=1))
    tl.store(q_ptr + offs, q, mask=m)
    tl.store(r_ptr + offs, r, mask=m)


@triton.jit
def _plus_combine(a, b):
    return plus_op(a, b)


@triton.jit
def custom_sum_kernel(x_ptr, rows_ptr, cols_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """A reduction over an axis whose combine is a custom op: the backend's reduction machinery, the plugin's op."""
    rm, rn = tl.arange(0, BM), tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=m, other=0.0)
    tl.store(rows_ptr + rm, tl.reduce(x, 1, _plus_combine), mask=rm < M)
    tl.store(cols_ptr + rn, tl.reduce(x, 0, _plus_combine), mask=rn < N)


@pytest.mark.parametrize("dtype", [torch.int32, torch.float32])
def test_custom_op_with_two_results(backend, rng, dtype):
    n = 1000
    if dtype == torch.int32:
        x = torch.randint(-5000, 5000, (n,), generator=rng, dtype=dtype)
        y = torch.randint(1, 97, (n,), generator=rng, dtype=dtype) * torch.where(
            torch.rand(n, generator=rng) < 0.5, -1, 1
        )
        y = y.to(dtype)
        want_q, want_r = torch.div(x, y, rounding_mode="trunc"), torch.fmod(x, y)
    else:
        x, y = torch.randn(n, generator=rng) * 100, torch.rand(n, generator=rng) + 0.5
        want_q, want_r = x / y, torch.fmod(x, y)
    q, r = torch.empty_like(x), torch.empty_like(x)
    sig = {"x_ptr": f"*{'i32' if dtype == torch.int32 else 'fp32'}"}
    sig = {**sig, "y_ptr": sig["x_ptr"], "q_ptr": sig["x_ptr"], "r_ptr": sig["x_ptr"], "n": "i32", "BLOCK": "constexpr"}
    k = triton.compile(ASTSource(divmod_kernel, sig, {"BLOCK": 256}), target=triton_backend_sdk.target(backend))
    ops = [op for op in parse_ttir(k.asm["sdkir"]).walk() if isinstance(op, divmod_op.op)]
    assert len(ops) == 1 and len(ops[0].results) == 2, "the two calls are one op with two results"
    from triton.runtime import driver

    previous = driver.active
    triton_backend_sdk.use(backend)
    try:
        k[(triton.cdiv(n, 256), 1, 1)](x, y, q, r, n, 256)
    finally:
        driver.set_active(previous)
    torch.testing.assert_close(q, want_q)
    torch.testing.assert_close(r, want_r)


def test_reduction_over_an_axis_with_a_custom_combine(backend, rng):
    M, N = 13, 29
    x = torch.randn(M, N, generator=rng)
    rows, cols = torch.empty(M), torch.empty(N)
    custom_sum_kernel[(1,)](x, rows, cols, M, N, BM=16, BN=32)
    torch.testing.assert_close(rows, x.sum(1), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(cols, x.sum(0), atol=1e-5, rtol=1e-5)


def test_custom_op_results_must_agree_across_signatures():
    with pytest.raises(ValueError, match="same number"):
        custom_op("tsdktest.ragged", {("fp32",): ("fp32", "fp32"), ("fp64",): "fp64"})


# ---- registry and API checks ---------------------------------------------------------------------------------------


def test_incompatible_plugin_names_both_versions():
    with pytest.raises(PluginError, match=r"'future' 9\.0 supports SDK API version 2\.\.3.*provides API version 1"):
        plugins.activate(Plugin("future", "9.0", api=(2, 3)))
    assert "future" not in {a.plugin.name for a in plugins.active_plugins()}


def test_incompatible_backend_names_both_versions():
    from triton_backend_sdk.backends.cpu_ref import compiler as cpu_ref

    class OldBackend(cpu_ref.CPURefBackend):
        sdk_api = (0, 0)

    with pytest.raises(PluginError, match=r"backend 'cpu_ref' .* supports SDK API version 0, .*API version 1"):
        OldBackend(triton_backend_sdk.target("cpu_ref"))


def _fake_dist(tmp_path, name: str, api: tuple[int, int], point: str = "after-pass:sdk-custom-ops") -> str:
    """A distribution with one `triton_backend_sdk.plugins` entry point, importable from `tmp_path`."""
    mod = f"{name}_mod"
    (tmp_path / f"{mod}.py").write_text(
        textwrap.dedent(f"""
        from triton_backend_sdk.plugins import Plugin
        from tests_plugin_passes import SwapAddPass

        def make():
            return Plugin(name={name!r}, version="2.5", api={api!r}, passes=(({point!r}, SwapAddPass()),),
                          backends=("cpu_ref",))
    """)
    )
    dist = tmp_path / f"{name}-2.5.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 2.5\n")
    (dist / "entry_points.txt").write_text(f"[triton_backend_sdk.plugins]\n{name} = {mod}:make\n")
    (tmp_path / "tests_plugin_passes.py").write_text(
        textwrap.dedent("""
        from triton_backend_sdk.ir import ops as O
        from triton_backend_sdk.pipeline import ir_pass

        @ir_pass(name="ep-add-to-sub")
        class SwapAddPass:
            def run(self, module, ctx):
                for op in list(module.walk()):
                    if isinstance(op, O.AddF):
                        new = O.SubF(list(op.operands), [op.result.type], loc=op.loc)
                        op.parent.insert(op.parent.ops.index(op), new)
                        op.result.replace_all_uses_with(new.result)
                        op.erase()
    """)
    )
    return str(tmp_path)


@pytest.fixture
def fresh_registry(monkeypatch):
    """Entry points are read once per process; let a test read them again and restore the registry after."""
    saved = dict(plugins._ACTIVE)
    monkeypatch.setattr(plugins, "_loaded_external", False)
    yield
    for name in list(plugins._ACTIVE):
        if name not in saved:
            plugins.deactivate(name)


def test_entry_point_plugin_is_activated_listed_and_changes_the_kernel(
    tmp_path, monkeypatch, fresh_registry, rng, capsys
):
    monkeypatch.syspath_prepend(_fake_dist(tmp_path, "tsdk_ep_ok", (1, 2)))
    n = 100
    x, y = torch.randn(n, generator=rng), torch.randn(n, generator=rng)
    out = torch.empty_like(x)
    k = triton.compile(_add_src(), target=triton_backend_sdk.target("cpu_ref"))
    k[(1, 1, 1)](x, y, out, n, 128)
    torch.testing.assert_close(out, x - y)
    active = {a.plugin.name: a for a in plugins.active_plugins()}
    assert "tsdk_ep_ok" in active and "tsdk_ep_ok-2.5" not in active["tsdk_ep_ok"].source
    assert "entry point tsdk_ep_ok" in active["tsdk_ep_ok"].source
    assert cli.main(["plugins"]) == 0
    listing = capsys.readouterr().out
    assert "SDK API version 1" in listing
    assert any(line.split()[:2] == ["backend", "cpu_ref"] and "api 1-1" in line for line in listing.splitlines())
    assert any(
        line.split()[:3] == ["plugin", "tsdk_ep_ok", "2.5"] and "api 1-2" in line for line in listing.splitlines()
    )


def test_incompatible_entry_point_plugin_fails_the_compile_naming_versions(
    tmp_path, monkeypatch, fresh_registry, capsys
):
    monkeypatch.syspath_prepend(_fake_dist(tmp_path, "tsdk_ep_old", (0, 0)))
    with pytest.raises(PluginError, match=r"'tsdk_ep_old' 2\.5 supports SDK API version 0, .*API version 1"):
        triton.compile(_add_src(64), target=triton_backend_sdk.target("cpu_ref"))
    assert cli.main(["plugins"]) == 1
    assert "ERROR: plugin 'tsdk_ep_old' 2.5 supports SDK API version 0" in capsys.readouterr().out


def test_a_broken_installed_plugin_can_be_disabled(tmp_path, monkeypatch, fresh_registry, capsys):
    """A plugin whose import fails stops every SDK compile (named); TRITON_SDK_DISABLE_PLUGINS leaves it unloaded."""
    monkeypatch.syspath_prepend(_fake_dist(tmp_path, "tsdk_ep_broken", (1, 1)))
    (tmp_path / "tsdk_ep_broken_mod.py").write_text("raise ImportError('vendor library missing')\n")
    with pytest.raises(PluginError, match=r"tsdk_ep_broken = tsdk_ep_broken_mod:make failed to import.*vendor"):
        triton.compile(_add_src(128), target=triton_backend_sdk.target("cpu_ref"))
    assert cli.main(["plugins"]) == 1
    monkeypatch.setenv(plugins.DISABLE_VARIABLE, "tsdk_nothing, tsdk_ep_broken")
    n = 90
    x, y = torch.rand(n), torch.rand(n)
    out = torch.empty_like(x)
    triton.compile(_add_src(128), target=triton_backend_sdk.target("cpu_ref"))[(1, 1, 1)](x, y, out, n, 128)
    torch.testing.assert_close(out, x + y)
    assert "tsdk_ep_broken" not in {a.plugin.name for a in plugins.active_plugins()}
    capsys.readouterr()
    assert cli.main(["plugins"]) == 0
    listing = capsys.readouterr().out
    assert "DISABLED: not loaded: named in TRITON_SDK_DISABLE_PLUGINS" in listing
    assert "WARNING: TRITON_SDK_DISABLE_PLUGINS names 'tsdk_nothing', which no installed plugin" in listing


def test_plugins_listing_flags_a_backend_for_another_sdk_api(tmp_path, monkeypatch, capsys):
    """An installed backend written for an SDK API this SDK does not provide is an error line and exit 1."""
    from triton.backends import Backend, backends
    from triton_backend_sdk.backends.cpu_ref import compiler as cpu_ref
    from triton_backend_sdk.backends.cpu_ref import driver as cpu_ref_driver

    class FutureBackend(cpu_ref.CPURefBackend):
        sdk_api = (3, 4)

    dist = tmp_path / "tsdk_future_backend-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tsdk_future_backend\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[triton.backends]\ntsdk_future = tsdk_future_mod\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(backends, "tsdk_future", Backend(compiler=FutureBackend, driver=cpu_ref_driver.CPURefDriver))
    assert cli.main(["plugins"]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if "ERROR: backend 'tsdk_future'" in x)
    assert "supports SDK API version 3..4" in line and "provides API version 1" in line


# ---- cache identity ------------------------------------------------------------------------------------------------


def test_backend_hash_is_stable_and_follows_plugins():
    make = triton.compiler.make_backend
    target = triton_backend_sdk.target("cpu_ref")
    h0 = make(target).hash()
    assert make(target).hash() == h0, "an unchanged registry must give the same cache key"
    plugins.activate(Plugin("tsdktest-ident", "1.0"))
    try:
        h1 = make(target).hash()
        assert h1 != h0
    finally:
        plugins.deactivate("tsdktest-ident")
    plugins.activate(Plugin("tsdktest-ident", "1.1"))
    try:
        assert make(target).hash() not in (h0, h1), "a new plugin version is a new cache key"
    finally:
        plugins.deactivate("tsdktest-ident")
    assert make(target).hash() == h0


def test_edited_python_plugin_changes_the_cache_key(tmp_path, monkeypatch):
    """A plugin's Python source is hashed: an edit without a version bump still recompiles."""
    mod = tmp_path / "tsdk_edit_plugin.py"
    mod.write_text("SCALE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("tsdk_edit_plugin")
    make = triton.compiler.make_backend
    target = triton_backend_sdk.target("cpu_ref")
    keys = []
    for text in ("SCALE = 1\n", "SCALE = 1\n", "SCALE = 2  # edited\n"):
        mod.write_text(text)
        plugins.activate(Plugin("tsdktest-edit", "1.0", module="tsdk_edit_plugin"))
        try:
            keys.append(make(target).hash())
        finally:
            plugins.deactivate("tsdktest-edit")
    assert keys[0] == keys[1] != keys[2]


def test_identity_is_computed_once_per_registry_change(monkeypatch):
    calls = []
    real = plugins.Active.identity
    monkeypatch.setattr(plugins.Active, "identity", lambda self: calls.append(1) or real(self))
    plugins.activate(Plugin("tsdktest-once", "1.0"))
    try:
        for _ in range(5):
            plugins.identity("cpu_ref")
        assert len(calls) == 1
    finally:
        plugins.deactivate("tsdktest-once")


# ---- Triton C++ plugin passes --------------------------------------------------------------------------------------

needs_triton_plugin = pytest.mark.skipif(
    not os.path.exists(TRITON_TEST_PLUGIN), reason=f"this Triton wheel has no {TRITON_TEST_PLUGIN}"
)


def in_own_process(test):
    """Run a test that loads a Triton C++ plugin library in a child pytest process.

    Triton loads plugin libraries into the global symbol scope, where their LLVM symbols take the place of PoCL's
    own LLVM in this process (PoCL then aborts or hangs building OpenCL programs): such tests must not share a
    process with the opencl tests."""

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        if kwargs.get("backend") == "opencl":
            from triton_backend_sdk.backends.opencl import runtime

            if "Portable Computing Language" in runtime.selected_device().platform.name:
                pytest.skip(
                    "PoCL's LLVM cannot share a process with a Triton C++ plugin library (the opencl "
                    "runtime refuses with a named error); runs on other OpenCL devices"
                )
        if os.environ.get("TBS_IN_OWN_PROCESS") == "1":
            return test(*args, **kwargs)
        node = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
        r = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", node],
            env=dict(os.environ, TBS_IN_OWN_PROCESS="1"),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
        assert r.returncode == 0, f"{node} failed in its own process:\n{r.stdout[-4000:]}\n{r.stderr[-2000:]}"

    return wrapper


@needs_triton_plugin
@in_own_process
def test_triton_cpp_plugin_pass_at_a_ttir_point(backend, rng, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_SDK_DUMP_DIR", str(tmp_path))
    plugins.activate(
        Plugin(
            "tsdktest-rename",
            "1.0",
            backends=(backend,),
            passes=(("after-pass:ttir.loop_unroll", TritonPass("add_plugin", TRITON_TEST_PLUGIN)),),
        )
    )
    try:
        k = triton.compile(_add_src(32), target=triton_backend_sdk.target(backend))
    finally:
        plugins.deactivate("tsdktest-rename")
    assert k.metadata.name == "foo"
    ttir = (tmp_path / "foo" / "00-ttir.ttir").read_text()
    assert "tt.func public @foo(" in ttir and "@add_kernel" not in ttir
    n = 70
    x, y = torch.randn(n, generator=rng), torch.randn(n, generator=rng)
    out = torch.empty_like(x)
    k[(3, 1, 1)](x, y, out, n, 32)
    torch.testing.assert_close(out, x + y)


def test_triton_pass_points_are_checked(backend):
    with pytest.raises(TypeError, match="TTIR stage"):
        inject("after:sdkir", TritonPass("add_plugin", TRITON_TEST_PLUGIN))
    inj = inject("after-pass:ttir.nosuchpass", TritonPass("common.add_licm"), backends=backend)
    try:
        with pytest.raises(KeyError, match=r"ttir\.nosuchpass.*ttir\.combine"):
            triton.compile(_add_src(16), target=triton_backend_sdk.target(backend))
    finally:
        remove_injection(inj)


@needs_triton_plugin
def test_triton_plugin_paths_environment_variable(tmp_path):
    """TRITON_PLUGIN_PATHS (Triton's variable): the library's passes run at the end of the TTIR stage."""
    script = textwrap.dedent("""
        import torch, triton, triton.language as tl, triton_backend_sdk
        from triton.compiler import ASTSource

        @triton.jit
        def scale(x_ptr, out_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 3.0)

        k = triton.compile(ASTSource(scale, {"x_ptr": "*fp32", "out_ptr": "*fp32", "BLOCK": "constexpr"},
                                     {"BLOCK": 64}), target=triton_backend_sdk.target("cpu_ref"))
        x = torch.randn(64)
        out = torch.empty_like(x)
        k[(1, 1, 1)](x, out, 64)
        torch.testing.assert_close(out, x * 3.0)
        print("NAME", k.metadata.name)
    """)
    env = dict(
        os.environ,
        TRITON_PLUGIN_PATHS=TRITON_TEST_PLUGIN,
        TRITON_SDK_DUMP_DIR=str(tmp_path / "dump"),
        TRITON_CACHE_DIR=str(tmp_path / "cache"),
    )
    path = tmp_path / "scale.py"  # Triton reads a jit function's source from its file
    path.write_text(script)
    r = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "NAME foo" in r.stdout
    assert "tt.func public @foo(" in (tmp_path / "dump" / "foo" / "00-ttir.ttir").read_text()


@needs_triton_plugin
@in_own_process
def test_plugins_cli_lists_triton_plugin_paths(monkeypatch, capsys):
    monkeypatch.setenv("TRITON_PLUGIN_PATHS", os.pathsep.join([TRITON_TEST_PLUGIN, "/nonexistent/libnope.so"]))
    assert cli.main(["plugins"]) == 1, "a missing library is an error"
    out = capsys.readouterr().out
    assert "libTritonPluginsTestLib.so" in out and "after-pass:ttir.end add_plugin" in out
    assert "ERROR: Triton plugin library '/nonexistent/libnope.so': no such file" in out


@needs_triton_plugin
def test_pocl_after_a_triton_plugin_library_is_a_named_refusal_not_an_abort():
    """Loading a Triton C++ plugin library first and starting PoCL second aborted the process (LLVM ERROR: Option
    'default' already exists!, rc 134); the opencl runtime now refuses before the ICD loader starts PoCL. The other
    order (PoCL first) keeps working."""
    from triton_backend_sdk.backends.opencl import runtime

    if not runtime.pocl_icds():
        pytest.skip("no PoCL ICD installed: the clash is PoCL's")
    first_plugin = textwrap.dedent(f"""
        from triton_backend_sdk import plugins
        from triton_backend_sdk.backends.opencl import runtime
        plugins.triton_library_passes({TRITON_TEST_PLUGIN!r})
        try:
            runtime.all_devices()
        except runtime.DeviceError as e:
            print("REFUSED", e)  # names the libraries: starting PoCL now would abort the process
    """)
    first_pocl = textwrap.dedent(f"""
        from triton_backend_sdk import plugins
        from triton_backend_sdk.backends.opencl import runtime
        print(len(runtime.all_devices()) > 0, plugins.triton_library_passes({TRITON_TEST_PLUGIN!r}))
    """)
    for script, want in (
        (first_plugin, "starting PoCL"),
        (first_pocl, "True ['add_plugin']"),
    ):
        r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
        assert r.returncode == 0 and want in r.stdout, (r.returncode, r.stdout, r.stderr[-2000:])
