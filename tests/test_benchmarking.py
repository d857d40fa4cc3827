"""do_bench/autotune on SDK drivers: the cache flush is sized to the host's last-level cache and costs one memset, so
`triton.testing.do_bench` takes a real sample (it sizes the sample by an estimate that includes the flush)."""

from __future__ import annotations

import torch
import triton
from triton.runtime import driver
from triton_backend_sdk.benchmarking import DEFAULT_FLUSH_BYTES, clear, flush_bytes, last_level_cache_bytes
from triton_backend_sdk.demo import add_kernel


def _fake_sysfs(root, caches):
    for i, (level, kind, size) in enumerate(caches):
        d = root / f"index{i}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")


def test_last_level_cache_from_sysfs(tmp_path):
    _fake_sysfs(
        tmp_path, [(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "2048K"), (3, "Unified", "96M")]
    )
    assert last_level_cache_bytes(str(tmp_path)) == 96 << 20
    assert last_level_cache_bytes(str(tmp_path / "missing")) is None


def test_flush_buffer_is_twice_the_llc_and_clear_zeroes_it():
    llc = last_level_cache_bytes()
    assert flush_bytes() == (2 * llc if llc else DEFAULT_FLUSH_BYTES)
    buf = torch.full((1 << 20,), 7, dtype=torch.uint8)
    clear(buf)
    assert int(buf.max()) == 0


def test_do_bench_takes_a_real_sample(backend):
    n = 4096
    x, y, out = torch.rand(n), torch.rand(n), torch.empty(n)
    cache = driver.active.get_empty_cache_for_benchmark()
    assert cache.numel() * cache.element_size() == flush_bytes()
    times = triton.testing.do_bench(lambda: add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024), return_mode="all")
    torch.testing.assert_close(out, x + y)
    # a 64 MiB torch.zero_ per round (18-27 ms on a loaded 2-core host) left 3-5 samples in do_bench's 100 ms
    assert len(times) >= 10, len(times)
