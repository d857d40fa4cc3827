"""`tl.atomic_poll` (Triton 3.9) on every SDK backend: the op's text against Triton's parser, matched flags of
every width and semantics, blocks of pointers with per-element expected values, timeouts (cpu_ref measures them
with the host clock; opencl with the device's own clock where it has one, PoCL's cycle counter scaled by a factor
measured at run time or NVIDIA's PTX global timer, and refuses a run-time timeout by name elsewhere), and programs
that wait for one another (run in a subprocess with a time limit, so that a hang fails the test instead of blocking
the run)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.backends.opencl.render import CLOCK_RULES, OPENCL, OPENCL_RULES, render_module, rules_for
from triton_backend_sdk.backends.opencl.render.language import CLOCK_CYCLE_COUNTER, CLOCK_GLOBALTIMER
from triton_backend_sdk.descriptor import TargetDescriptor
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import parse_ttir, print_module, verify
from triton_backend_sdk.ir.dialects.device import ClockNs
from triton_backend_sdk.ir.enums import MemSemantic, MemSyncScope
from triton_backend_sdk.ir.types import i64
from triton_backend_sdk.lowering import RuleTable
from triton_backend_sdk.options import Options
from triton_backend_sdk.pipeline import PassContext
from triton_backend_sdk.transforms import legalization_passes
from triton_backend_sdk.transforms.atomic_poll import AtomicPoll as AtomicPollPass
from ttir_corpus import cross_check

#: tt.atomic_poll is Triton 3.9's; an older parser does not know it
TRITON_39 = tuple(int(x) for x in triton.__version__.split(".")[:2]) >= (3, 9)
DTYPES = [torch.int16, torch.int32, torch.int64]


def _random_ints(rng: torch.Generator, dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=rng, dtype=torch.int64).to(dtype)


# ---- the op's text ---------------------------------------------------------------------------------------------------

POLL_TEXT = """\
module {
  tt.func public @poll(%p: !tt.ptr<i64>, %e: i64, %t: i64) {
    %0 = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %1 = tt.splat %p : !tt.ptr<i64> -> tensor<8x!tt.ptr<i64>>
    %2 = tt.addptr %1, %0 : tensor<8x!tt.ptr<i64>>, tensor<8xi32>
    %3 = tt.splat %e : i64 -> tensor<8xi64>
    %4 = tt.atomic_poll relaxed, cta, %2, %3 timeout %t : tensor<8x!tt.ptr<i64>>, tensor<8xi64> -> tensor<8xi1>
    %5 = tt.atomic_poll acquire, sys, %p, %e : !tt.ptr<i64>, i64 -> i1
    tt.return
  }
}
"""


def test_poll_text_round_trips_and_matches_tritons_parser() -> None:
    m = parse_ttir(POLL_TEXT)
    verify(m)
    assert print_module(m) == POLL_TEXT
    polls = [op for op in m.walk() if isinstance(op, O.AtomicPoll)]
    assert [(p.sem, p.scope, p.timeout is not None) for p in polls] == [
        (MemSemantic.RELAXED, MemSyncScope.CTA, True),
        (MemSemantic.ACQUIRE, MemSyncScope.SYSTEM, False),
    ]
    assert str(polls[0].result.type) == "tensor<8xi1>"
    if TRITON_39:
        cross_check(POLL_TEXT, m)


def test_clock_reads_and_prints_in_generic_form() -> None:
    text = 'module {\n  tt.func @k() {\n    %0 = "device.clock_ns"() : () -> i64\n    tt.return\n  }\n}\n'
    m = parse_ttir(text)
    verify(m)
    (clock,) = [op for op in m.walk() if isinstance(op, ClockNs)]
    assert clock.result.type == i64
    assert print_module(m) == text


# ---- the legalization ----------------------------------------------------------------------------------------------


def _legalized(text: str, clock: bool) -> list[str]:
    m = parse_ttir(text)
    ctx = PassContext(Options(), TargetDescriptor(name="t", arch="x"), {})
    AtomicPollPass(clock=clock).run(m, ctx)
    verify(m)
    return [op.op_name for op in m.walk()]


def test_poll_becomes_a_loop_of_atomic_loads_with_a_clock_only_for_a_timeout() -> None:
    names = _legalized(POLL_TEXT, clock=True)
    assert "tt.atomic_poll" not in names
    assert names.count("scf.while") == 2 and names.count("tt.atomic_load") == 2
    assert names.count("device.clock_ns") == 2  # the timed poll: its start and one reading per round
    assert names.count("tt.reduce") == 1  # only the block poll asks whether any element is still unmatched
    untimed = POLL_TEXT.replace(" timeout %t", "")
    assert "device.clock_ns" not in _legalized(untimed, clock=False)


def test_run_time_timeout_without_a_clock_is_refused_by_name() -> None:
    with pytest.raises(UnsupportedError, match="no clock"):
        _legalized(POLL_TEXT, clock=False)


def test_a_backend_with_its_own_rule_keeps_the_op() -> None:
    desc = TargetDescriptor(name="t", arch="x")
    polls = lambda r: [p for p in legalization_passes(desc, Options(), r) if isinstance(p, AtomicPollPass)]
    native = RuleTable("native")
    native.register(O.AtomicPoll)(lambda ctx, op: None)
    timed = RuleTable("timed")
    timed.register(ClockNs)(lambda ctx, op: None)
    assert polls(native) == [] and polls(native.derive("vendor")) == []
    assert polls(RuleTable("plain")) == [AtomicPollPass(clock=False)]
    assert polls(timed.derive("vendor")) == [AtomicPollPass(clock=True)]
    assert polls(None) == [AtomicPollPass(clock=True)]


def test_opencl_has_the_clock_rule_only_for_a_device_with_a_clock() -> None:
    desc = TargetDescriptor(name="opencl", arch="x")
    polls = lambda r: [p for p in legalization_passes(desc, Options(), r) if isinstance(p, AtomicPollPass)]
    assert rules_for(OPENCL, frozenset({"cl_khr_fp64"})) is OPENCL_RULES
    assert polls(OPENCL_RULES) == [AtomicPollPass(clock=False)]  # a device with neither clock: the named refusal
    for feature in (CLOCK_GLOBALTIMER, CLOCK_CYCLE_COUNTER):
        assert rules_for(OPENCL, frozenset({feature})) is CLOCK_RULES
        assert polls(CLOCK_RULES) == [AtomicPollPass(clock=True)]


# ---- opencl's clock spellings (no device needed) --------------------------------------------------------------------

CLOCK_TEXT = """\
module {
  tt.func public @k(%p: !tt.ptr<i64>) {
    %0 = "device.clock_ns"() : () -> i64
    tt.store %p, %0 : !tt.ptr<i64>
    tt.return
  }
}
"""


def test_opencl_reads_nvidias_global_timer_in_nanoseconds() -> None:
    rk = render_module(parse_ttir(CLOCK_TEXT), "k", CLOCK_RULES, OPENCL, 1, frozenset({CLOCK_GLOBALTIMER}), "dev")
    assert (
        '  { ulong clk0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(clk0)); v0_1 = (long)clk0; }'
        in rk.source.splitlines()
    )
    assert not rk.clock_scale and "tb_clock_scale" not in rk.source  # nanoseconds already: no hidden parameter


def test_opencl_scales_pocls_cycle_counter_by_a_hidden_parameter() -> None:
    """The factor is a parameter, never a constant in the source: the program is the same in every process."""
    rk = render_module(parse_ttir(CLOCK_TEXT), "k", CLOCK_RULES, OPENCL, 1, frozenset({CLOCK_CYCLE_COUNTER}), "dev")
    lines = rk.source.splitlines()
    assert (
        "  { ulong clk0; clk0 = __builtin_readcyclecounter(); v0_1 = "
        "(long)((mul_hi(clk0, tb_clock_scale) << 32) | ((clk0 * tb_clock_scale) >> 32)); }" in lines
    )
    assert rk.clock_scale
    # the launcher's hidden argument after the kernel's own, before the grid's size (the launch may be split)
    assert lines[2].endswith(", ulong a_p0_off, ulong tb_clock_scale, int tb_grid0, int tb_grid1, int tb_grid2) {")


def test_opencl_clock_shared_by_work_item_0_on_a_group() -> None:
    """Every work-item of a group sees work-item 0's reading, so the poll's loop stays uniform across barriers."""
    feats = frozenset({CLOCK_CYCLE_COUNTER})
    src = render_module(parse_ttir(CLOCK_TEXT), "k", CLOCK_RULES, OPENCL, 128, feats, "dev").source
    assert "if (lid == 0u) { ulong clk0; clk0 = __builtin_readcyclecounter();" in src
    assert src.count("barrier(CLK_LOCAL_MEM_FENCE);") == 2


def test_opencl_clock_rule_refuses_a_device_without_a_clock() -> None:
    with pytest.raises(UnsupportedError, match="no clock"):
        render_module(parse_ttir(CLOCK_TEXT), "k", CLOCK_RULES, OPENCL, 1, frozenset(), "dev")


def _timeouts_refused(backend: str) -> bool:
    """opencl on a device with no clock the SDK can read refuses run-time timeouts (on PoCL/x86 and NVIDIA: runs)."""
    if not backend.startswith("opencl"):
        return False
    from triton_backend_sdk.backends.opencl.compiler import OpenCLBackend

    return OPENCL.clock(frozenset(OpenCLBackend.describe().features)) is None


# ---- kernels --------------------------------------------------------------------------------------------------------


@triton.jit
def _poll_scalar(flag, out, done, expected, SEM: tl.constexpr, SCOPE: tl.constexpr):
    matched = tl.atomic_poll(flag, expected, sem=SEM, scope=SCOPE)
    tl.store(out, matched)
    tl.store(done, 1)


@triton.jit
def _poll_block(flag, want, out, M: tl.constexpr, N: tl.constexpr, SEM: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    matched = tl.atomic_poll(flag + offs, tl.load(want + offs), sem=SEM)
    tl.store(out + offs, matched)


@triton.jit
def _poll_block_timeout(flag, want, out, timeout_ns, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    matched = tl.atomic_poll(flag + offs, tl.load(want + offs), timeout_ns=timeout_ns)
    tl.store(out + offs, matched)


@triton.jit
def _poll_zero_timeout(flag, want, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    matched = tl.atomic_poll(flag + offs, tl.load(want + offs), sem="relaxed", timeout_ns=0)
    tl.store(out + offs, matched)


@triton.jit
def _poll_scalar_timeout(flag, out, timeout_ns):
    pid = tl.program_id(0)
    tl.store(out + pid, tl.atomic_poll(flag + pid, 1, timeout_ns=timeout_ns))


@pytest.mark.parametrize("sem", ["relaxed", "acquire"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_poll_of_a_set_flag_returns_true(backend: str, dtype: torch.dtype, sem: str, rng: torch.Generator) -> None:
    flag = _random_ints(rng, dtype, (1,))
    before = flag.clone()
    out = torch.zeros(1, dtype=torch.bool)
    done = torch.zeros(1, dtype=torch.int32)
    _poll_scalar[(1,)](flag, out, done, int(flag.item()), SEM=sem, SCOPE="gpu")
    assert out.item() and done.item() == 1
    assert torch.equal(flag, before)  # a poll reads only


@pytest.mark.parametrize("scope", ["cta", "gpu", "sys"])
def test_poll_scopes(backend: str, scope: str) -> None:
    flag = torch.full((1,), -7, dtype=torch.int32)
    out = torch.zeros(1, dtype=torch.bool)
    done = torch.zeros(1, dtype=torch.int32)
    _poll_scalar[(1,)](flag, out, done, -7, SEM="acquire", SCOPE=scope)
    assert out.item() and done.item() == 1


@pytest.mark.parametrize("sem", ["relaxed", "acquire"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1, 8), (4, 16), (2, 64)], ids=str)
def test_poll_block_with_per_element_expected_values(
    backend: str, dtype: torch.dtype, sem: str, shape: tuple[int, int], rng: torch.Generator
) -> None:
    flag = _random_ints(rng, dtype, shape)
    out = torch.zeros(shape, dtype=torch.bool)
    _poll_block[(1,)](flag, flag.clone(), out, M=shape[0], N=shape[1], SEM=sem)
    assert bool(out.all())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_constant_zero_timeout_reads_each_element_once(backend: str, dtype: torch.dtype, rng: torch.Generator) -> None:
    """`timeout_ns=0` written in the kernel needs no clock: one round of loads, so every backend runs it."""
    n = 64
    flag = _random_ints(rng, dtype, (n,))
    want = flag.clone()
    miss = torch.rand(n, generator=rng) < 0.5
    want[miss] ^= 1
    out = torch.zeros(n, dtype=torch.bool)
    _poll_zero_timeout[(1,)](flag, want, out, N=n)
    assert torch.equal(out, ~miss)


@pytest.mark.parametrize("initial, expected", [(1, True), (0, False)])
def test_run_time_timeout(backend: str, initial: int, expected: bool) -> None:
    flag = torch.full((1,), initial, dtype=torch.int32)
    out = torch.zeros(1, dtype=torch.bool)
    if _timeouts_refused(backend):
        with pytest.raises(UnsupportedError, match="no clock") as err:
            _poll_scalar_timeout[(1,)](flag, out, 0)
        assert "tt.atomic_poll with timeout_ns" in str(err.value) and "TRITON_SDK_DUMP_DIR" in str(err.value)
        return
    _poll_scalar_timeout[(1,)](flag, out, 0)
    assert out.item() == expected


@pytest.mark.parametrize("programs", [1, 3])
def test_timeout_waits_about_its_budget(backend: str, programs: int) -> None:
    """A poll that never succeeds returns after its timeout: at least the budget on cpu_ref (the host clock), at
    least 3/4 of it on opencl (a cycle counter is scaled by a measured factor, within ~1%), and well before 2 s."""
    if _timeouts_refused(backend):
        pytest.skip("this OpenCL device has no clock: run-time timeouts are refused (test_run_time_timeout)")
    flag = torch.zeros(programs, dtype=torch.int32)
    out = torch.ones(programs, dtype=torch.bool)
    budget = 20_000_000
    _poll_scalar_timeout[(programs,)](flag, out, 0)  # compile (and calibrate) outside the measurement
    t0 = time.perf_counter()
    _poll_scalar_timeout[(programs,)](flag, out, budget)
    waited = time.perf_counter() - t0
    assert not out.any()
    least = budget * 1e-9 * (1.0 if backend == "cpu_ref" else 0.75)
    assert least <= waited < 2.0, f"timed out after {waited * 1e3:.1f} ms of a {budget * 1e-6:.0f} ms budget"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_block_timeout_gives_exactly_the_matching_elements(
    backend: str, dtype: torch.dtype, rng: torch.Generator
) -> None:
    if _timeouts_refused(backend):
        pytest.skip("this OpenCL device has no clock: run-time timeouts are refused (test_run_time_timeout)")
    shape = (4, 16)
    flag = _random_ints(rng, dtype, shape)
    want = flag.clone()
    miss = torch.rand(shape, generator=rng) < 0.3
    want[miss] += 1
    out = torch.zeros(shape, dtype=torch.bool)
    _poll_block_timeout[(1,)](flag, want, out, 2_000_000, M=shape[0], N=shape[1])
    assert torch.equal(out, ~miss)


# ---- programs waiting for one another --------------------------------------------------------------------------------

_CHAIN = textwrap.dedent(
    """
    import sys, torch, triton, triton.language as tl, triton_backend_sdk

    triton_backend_sdk.use(sys.argv[1])

    @triton.jit
    def chain(flags, payload, seen):
        pid = tl.program_id(0)
        value = pid * 3 + 1
        if pid > 0:
            tl.store(seen + pid, tl.atomic_poll(flags + pid - 1, 1, sem="acquire").to(tl.int32))
            value = tl.load(payload + pid - 1) + 3
        tl.store(payload + pid, value)
        tl.atomic_xchg(flags + pid, 1, sem="release")

    n = int(sys.argv[2])
    flags = torch.zeros(n, dtype=torch.int32)
    payload = torch.zeros(n, dtype=torch.int32)
    seen = torch.zeros(n, dtype=torch.int32)
    chain[(n,)](flags, payload, seen)
    assert flags.tolist() == [1] * n, flags
    assert payload.tolist() == [3 * i + 1 for i in range(n)], payload
    assert seen[1:].tolist() == [1] * (n - 1), seen
    print("ok")
    """
)


@pytest.mark.parametrize("programs", [2, 33])
def test_program_waits_for_a_lower_numbered_one(backend: str, programs: int, tmp_path: Path) -> None:
    """Program i polls the flag program i-1 sets with a release exchange after writing its payload, then reads that
    payload. The CPU grid claims programs in increasing id, so waiting only on lower ids cannot deadlock."""
    script = tmp_path / "chain.py"  # Triton reads a @jit function's source from its file
    script.write_text(_CHAIN)
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, str(script), backend, str(programs)],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]
