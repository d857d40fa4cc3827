"""tools/sanitize.py's reading of valgrind logs: errors with a frame in the launcher or in JIT-compiled kernel code
are the SDK's (they fail the run); the interpreter's and the loader's are only listed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("sanitize", Path(__file__).parent.parent / "tools" / "sanitize.py")
sanitize = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sanitize)

LOG = """==7== Memcheck, a memory error detector
==7== Invalid read of size 8
==7==    at 0x4023C74: strncmp (strcmp-sse2.S:162)
==7==    by 0x4004BEE: is_dst (dl-load.c:216)
==7==  Address 0x62a5bd1 is 17 bytes inside a block of size 20 alloc'd
==7== Invalid write of size 4
==7==    at 0x1FFF0010: ???
==7==    by 0x6D1A2B3: tbs::run_chunks(tbs::Job*, tbs::SignalPoll*) (launcher.cpp:186)
==7== Conditional jump or move depends on uninitialised value(s)
==7==    at 0x49E04DA: maybe_small_long (longobject.c:71)
==7==    by 0x49E075F: int_from_bytes_impl (longobject.c:5946)
==7== Use of uninitialised value of size 8
==7==    at 0x6D1A000: tbs::Launcher::convert(unsigned long, _object*, unsigned long*) const (launcher.cpp:600)
==7== ERROR SUMMARY: 4 errors from 4 contexts (suppressed: 0 from 0)
"""


def test_error_blocks_and_their_owner() -> None:
    blocks = sanitize._error_blocks(LOG)
    assert [b.splitlines()[0].split("== ")[1] for b in blocks] == [
        "Invalid read of size 8",
        "Invalid write of size 4",
        "Conditional jump or move depends on uninitialised value(s)",
        "Use of uninitialised value of size 8",
    ]
    assert [sanitize._is_ours(b) for b in blocks] == [False, True, False, True]
    assert sanitize._top_object(blocks[0]) == "strcmp-sse2.S"
    assert sanitize._top_object(blocks[2]) == "longobject.c"


def test_pytest_summary_lines(tmp_path) -> None:
    log = tmp_path / "log"
    log.write_text("....\n======= 3 passed, 1 skipped in 2.0s =======\nnoise\n1 failed, 9 passed in 5s\n")
    assert sanitize._results(log) == "3 passed, 1 skipped in 2.0s; 1 failed, 9 passed in 5s"
