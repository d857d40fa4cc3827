"""A pytest plugin staged beside the upstream tests: the backstop for pytest-timeout's signal method.

SIGALRM is only handled when the interpreter runs Python again, so a test stuck inside a native kernel call
never times out under it. This thread waits the timeout plus a grace period, appends the test id to the file
named by the runner's ``RECORD`` variable and ends the worker process; pytest-xdist reports that as a crash, and
the runner reads the record to report the test as timed out instead.
"""

import faulthandler
import os
import threading

import pytest
from triton_backend_sdk.upstream.runner import LIMIT, RECORD


def _expire(nodeid: str) -> None:
    with open(os.environ[RECORD], "a") as f:
        f.write(nodeid + "\n")
    faulthandler.dump_traceback(all_threads=True)
    os._exit(70)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    limit = float(os.environ.get(LIMIT) or 0)
    timer = threading.Timer(limit, _expire, (item.nodeid,)) if limit > 0 and os.environ.get(RECORD) else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()
