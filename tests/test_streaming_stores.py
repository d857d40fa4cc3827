"""Non-temporal stores (sdk/analysis/streaming_stores.py, cpu_ref's `!nontemporal` stores and the entry's fence):
which stores stream, the LLVM IR cpu_ref emits for them, and results that match torch where they stream."""

from __future__ import annotations

import re

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.analysis.streaming_stores import (
    LAUNCH_STREAM_BYTES,
    STREAM_BYTES,
    launch_streaming_stores,
    streaming_programs,
    streaming_stores,
)
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import parse_ttir


def _kernel(n: int, body_extra: str = "", out: str = "%y", args_extra: str = "") -> str:
    return f"""module {{
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %c: !tt.ptr<i32>{args_extra}) {{
    %r = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32>
    %px = tt.splat %x : !tt.ptr<f32> -> tensor<{n}x!tt.ptr<f32>>
    %qx = tt.addptr %px, %r : tensor<{n}x!tt.ptr<f32>>, tensor<{n}xi32>
    %v = tt.load %qx : tensor<{n}x!tt.ptr<f32>>
    %py = tt.splat {out} : !tt.ptr<f32> -> tensor<{n}x!tt.ptr<f32>>
    %qy = tt.addptr %py, %r : tensor<{n}x!tt.ptr<f32>>, tensor<{n}xi32>
    tt.store %qy, %v : tensor<{n}x!tt.ptr<f32>>
{body_extra}
    tt.return
  }}
}}"""


def _streaming(text: str, analysis=streaming_stores) -> list[str]:
    func = next(op for op in parse_ttir(text).ops if isinstance(op, O.Func))
    return [op.op_name for op in analysis(func)]


def test_large_tile_to_an_unread_argument_streams():
    assert STREAM_BYTES == 16 * 1024
    assert _streaming(_kernel(4096)) == ["tt.store"]


def test_small_tile_does_not_stream():
    assert _streaming(_kernel(1024)) == []


def test_store_to_a_read_argument_does_not_stream():
    """In place (`y` is `x`): the kernel reads what it writes."""
    assert _streaming(_kernel(4096, out="%x")) == []
    assert _streaming(_kernel(1024, out="%x"), launch_streaming_stores) == []


def test_small_tile_streams_by_launch_size_only():
    """A 4 KiB tile: not a streaming store by its tile, one that streams where the launch writes 32 MiB through it;
    a 16 KiB tile streams by its tile and is not in the launch set."""
    assert LAUNCH_STREAM_BYTES == 32 << 20
    assert _streaming(_kernel(1024), launch_streaming_stores) == ["tt.store"]
    assert _streaming(_kernel(4096), launch_streaming_stores) == []
    func = next(op for op in parse_ttir(_kernel(1024)).ops if isinstance(op, O.Func))
    (store,) = launch_streaming_stores(func)
    assert streaming_programs(store) == 8192  # programs of 4 KiB that write 32 MiB


@pytest.mark.parametrize(
    "extra",
    [
        "    %a = tt.atomic_rmw add, relaxed, gpu, %c, %c1 : (!tt.ptr<i32>, i32) -> i32",
        "    gpu.barrier",
    ],
)
def test_programs_that_talk_do_not_stream(extra):
    body = "    %c1 = arith.constant 1 : i32\n" + extra
    assert _streaming(_kernel(4096, body_extra=body)) == []
    assert _streaming(_kernel(1024, body_extra=body), launch_streaming_stores) == []


@triton.jit
def _scaled_rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=m, other=0.0)
    tl.store(y_ptr + row * n_cols + offs, x * 2.0 + 1.0, mask=m)


@pytest.mark.parametrize("n_cols", [4096, 4000])
def test_cpu_ref_streams_rows_and_fences(cpu_ref_active, n_cols):
    """A 16 KiB row per program: non-temporal vector stores, one fence after the worker's last program; results
    equal torch's, full and masked rows."""
    x = torch.randn(37, n_cols, generator=torch.Generator().manual_seed(n_cols))
    y = torch.empty_like(x)
    k = _scaled_rows[(37,)](x, y, n_cols, BLOCK=4096)
    llir = k.asm["llir"]
    assert "!nontemporal" in llir
    assert llir.count("fence seq_cst") == 1
    torch.testing.assert_close(y, x * 2.0 + 1.0)


@pytest.mark.parametrize("rows", [8, LAUNCH_STREAM_BYTES // 4096 + 9])
def test_cpu_ref_small_rows_stream_by_launch_size(cpu_ref_active, rows):
    """4 KiB rows: the store is written twice, non-temporal and ordinary, chosen by whether the launch's programs
    write LAUNCH_STREAM_BYTES (8192 programs of 4 KiB); one fence after the worker's last program. A launch of 8
    rows and one past the threshold, ragged rows of 1008 under the mask: results equal torch's."""
    x = torch.randn(rows, 1008, generator=torch.Generator().manual_seed(rows))
    y = torch.empty_like(x)
    k = _scaled_rows[(rows,)](x, y, 1008, BLOCK=1024)
    stores = [line for line in k.asm["llir"].splitlines() if re.match(r"\s*store <\d+ x float>", line)]
    assert any("!nontemporal" in line for line in stores) and any("!nontemporal" not in line for line in stores)
    assert k.asm["llir"].count("fence seq_cst") == 1
    assert re.search(r"icmp ugt i64 %[\w.]+, 8191", k.asm["llir"])
    torch.testing.assert_close(y, x * 2.0 + 1.0)


def test_a_callee_touching_memory_stops_streaming():
    """A noinline callee that loads through its own pointer argument: its arguments cannot be compared with the
    kernel's, so the kernel does not stream."""
    text = _kernel(4096).replace(
        "    tt.return\n  }\n}",
        """    tt.return
  }
  tt.func private @h(%p: !tt.ptr<f32>) -> f32 {
    %v = tt.load %p : !tt.ptr<f32>
    tt.return %v : f32
  }
}""",
    )
    funcs = [op for op in parse_ttir(text).ops if isinstance(op, O.Func)]
    assert streaming_stores(funcs[0]) and not streaming_stores(funcs[0], funcs[1:])
