"""The compile pipeline: stage order, dumps, Triton's inspection hook, injected passes, the compile CLI."""

from __future__ import annotations

import os

import pytest
import torch
import triton
import triton.language as tl
import triton_backend_sdk
from triton import knobs
from triton.compiler import ASTSource
from triton_backend_sdk import cli, plugins
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Module
from triton_backend_sdk.pipeline import IRPass, PassContext, inject, injections_for, remove_injection
from triton_backend_sdk.plugins import Plugin, PluginError


@triton.jit
def mix_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def _src(block: int = 128) -> ASTSource:
    return ASTSource(
        mix_kernel,
        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": block},
    )


def test_stage_order_and_outputs(backend):
    k = triton.compile(_src(), target=triton_backend_sdk.target(backend))
    backend_obj = triton.compiler.make_backend(triton_backend_sdk.target(backend))
    stages: dict = {}
    backend_obj.add_stages(stages, backend_obj.parse_options({}))
    names = list(stages)
    # `ttgir`: the tile program after the backend's tile passes, still in Triton's dialects (a .ttgir file starts
    # after it)
    assert names[:3] == ["ttir", "ttgir", "sdkir"] and names[-1] == backend_obj.binary_ext
    assert "tt.func public @mix_kernel" in k.asm["ttgir"] and "#ttg." not in k.asm["ttgir"]
    assert "tt.func public @mix_kernel" in k.asm["sdkir"]
    assert isinstance(k.asm[backend_obj.binary_ext], bytes)


def test_dump_every_stage(backend, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_SDK_DUMP_DIR", str(tmp_path))
    triton.compile(_src(64), target=triton_backend_sdk.target(backend))
    files = sorted(os.listdir(tmp_path / "mix_kernel"))
    assert files[0].startswith("00-ttir") and files[1].startswith("01-ttgir") and files[2].startswith("02-sdkir")
    assert len(files) >= 5
    sdkir = (tmp_path / "mix_kernel" / files[2]).read_text()
    assert "tt.load" in sdkir and "arith.addf" in sdkir


def test_compile_cli_from_a_dump(backend, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRITON_SDK_DUMP_DIR", str(tmp_path / "a"))
    triton.compile(_src(32), target=triton_backend_sdk.target(backend))
    monkeypatch.delenv("TRITON_SDK_DUMP_DIR")
    sdkir = tmp_path / "a" / "mix_kernel" / "02-sdkir.sdkir"
    assert cli.main(["compile", str(sdkir), "--backend", backend, "--dump", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    binary_ext = triton.compiler.make_backend(triton_backend_sdk.target(backend)).binary_ext
    assert binary_ext in out
    assert os.listdir(tmp_path / "b" / "mix_kernel")


def test_add_stages_inspection_hook_is_honoured(backend, monkeypatch):
    seen = []

    def hook(*args):
        if not args:
            return "sdk-test-hook", "sdk-test-hook-hash"
        _backend, stages, _options, _language, _cap = args
        inner = stages["sdkir"]

        def spy(src, md):
            seen.append(md["hash"])
            return inner(src, md)

        stages["sdkir"] = spy

    monkeypatch.setattr(knobs.runtime, "add_stages_inspection_hook", hook)
    monkeypatch.setattr(knobs.compilation, "always_compile", True)
    triton.compile(_src(256), target=triton_backend_sdk.target(backend))
    assert seen


class AddToSub(IRPass):
    """Turns every arith.addf into arith.subf: a visible, testable rewrite."""

    name = "test-add-to-sub"

    def run(self, module: Module, ctx: PassContext) -> None:
        for op in list(module.walk()):
            if isinstance(op, O.AddF):
                new = O.SubF(list(op.operands), [op.result.type], loc=op.loc)
                block = op.parent
                block.insert(block.ops.index(op), new)
                op.result.replace_all_uses_with(new.result)
                op.erase()


@pytest.mark.parametrize("point", ["after:sdkir", "before:<next>"])
def test_injected_ir_pass_changes_the_kernel_and_the_cache_key(backend, point, rng):
    if point == "before:<next>":  # the backend's first code-generation stage, whatever it is called
        b = triton.compiler.make_backend(triton_backend_sdk.target(backend))
        stages: dict = {}
        b.add_stages(stages, b.parse_options({}))
        names = list(stages)
        point = f"before:{names[names.index('sdkir') + 1]}"
    n = 300
    x, y = torch.randn(n, generator=rng), torch.randn(n, generator=rng)
    out = torch.empty_like(x)
    target = triton_backend_sdk.target(backend)
    plain = triton.compile(_src(), target=target)
    inj = inject(point, AddToSub(), backends=backend)
    try:
        rewritten = triton.compile(_src(), target=target)
        assert rewritten.hash != plain.hash
        rewritten[(3, 1, 1)](x, y, out, n, 128)
        torch.testing.assert_close(out, x - y)
    finally:
        remove_injection(inj)
    plain[(3, 1, 1)](x, y, out, n, 128)
    torch.testing.assert_close(out, x + y)


def test_unknown_injection_point_is_an_error(backend):
    with pytest.raises(ValueError, match="injection point"):
        inject("sometime:sdkir", AddToSub())
    with pytest.raises(ValueError, match=r"after:nonexistent.*no stage 'nonexistent' \(stages: \['ttir'"):
        inject("after:nonexistent", lambda src, md: src, backends=backend)


CODEGEN = {"cpu_ref": ("llir", "obj"), "opencl": ("cl", "clbin")}


@pytest.mark.parametrize("where", ["before:ttir", "after:first-codegen", "before:last-codegen", "after:last-codegen"])
def test_an_ir_pass_at_a_stage_point_it_cannot_read_is_refused_at_inject(backend, where):
    """An SDK IR pass at before:ttir got Triton's frontend module back as text (AttributeError inside make_ttir); at
    after:llir / after:cl it was handed LLVM IR / OpenCL C (a parse error). Both now fail at inject, naming the
    points where it can run."""
    first, last = CODEGEN[backend]
    point = where.replace("first-codegen", first).replace("last-codegen", last)
    with pytest.raises(ValueError, match=r"an SDK IR pass cannot run at .*its stage points are \['after:ttir'"):
        inject(point, AddToSub(), backends=backend)
    assert not [i for i in injections_for(backend) if i.point == point]


def test_a_stage_point_only_some_backends_have_needs_backends():
    """A hook at before:llir for every backend broke every opencl compile (KeyError, no plugin named)."""
    with pytest.raises(ValueError, match=r"before:llir.*opencl: no stage 'llir'.*inject with backends="):
        inject("before:llir", lambda src, md: None)
    remove_injection(inject("before:llir", lambda src, md: None, backends="cpu_ref"))


def test_a_plugin_at_a_point_it_cannot_use_is_refused_before_its_code_runs():
    ran = []
    bad = Plugin(
        "tsdk_bad_point",
        "1.0",
        passes=(("after:llir", AddToSub()),),
        backends=("cpu_ref",),
        setup=lambda: ran.append(1),
    )
    with pytest.raises(PluginError, match=r"plugin 'tsdk_bad_point' 1\.0 .*an SDK IR pass cannot run at 'after:llir'"):
        plugins.activate(bad)
    assert ran == [] and "tsdk_bad_point" not in {a.plugin.name for a in plugins.active_plugins()}


@pytest.mark.parametrize("point", ["before-pass:int-semantic", "after-pass:mathlibrary"])
def test_misspelled_pass_point_is_an_error(backend, point):
    """An injection at a pass no SDK IR pass is named would never run; it is refused when a kernel compiles, with
    the passes of that compile (before: it compiled silently without the pass)."""
    inj = inject(point, AddToSub(), backends=backend)
    try:
        with pytest.raises(
            KeyError, match=r"no SDK IR pass is named .*'int-semantics'|no SDK IR pass .*'math-library'"
        ):
            triton.compile(_src(256), target=triton_backend_sdk.target(backend))
    finally:
        remove_injection(inj)


@pytest.mark.parametrize("point", ["after-pass:int-semantics", "before-pass:test-add-to-sub-absent-here"])
def test_pass_points_that_exist(backend, rng, point):
    """A real pass's point runs the injected pass; a point of a pass defined in this process but not part of this
    compile (another configuration's) is accepted and simply has nothing to run around."""

    class AbsentHere(IRPass):
        name = "test-add-to-sub-absent-here"

        def run(self, module: Module, ctx: PassContext) -> None:
            raise AssertionError("not part of any compile")

    inj = inject(point, AddToSub(), backends=backend)
    try:
        k = triton.compile(_src(256), target=triton_backend_sdk.target(backend))
        x, y, out = torch.randn(300, generator=rng), torch.randn(300, generator=rng), torch.empty(300)
        k[(2, 1, 1)](x, y, out, 300, 256)
        want = x - y if point.startswith("after-pass:int-semantics") else x + y
        torch.testing.assert_close(out[:300], want)
    finally:
        remove_injection(inj)
    del AbsentHere
