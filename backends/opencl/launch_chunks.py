"""Running a long opencl launch in pieces, so that Ctrl-C stops it between programs.

An enqueued NDRange runs to its end: OpenCL cannot cancel it, and the thread waiting for it sees Python's signals
only when the wait returns. So a launch predicted to take longer than PIECE_SECONDS is enqueued as boxes of
consecutive programs (x fastest, Triton's order), each with a global work offset that the kernel adds to its group
ids, the grid's size passed as parameters (render: `chunk_group_id`, `GRID`). The launcher enqueues the next box
before waiting for the current one, so the device does not idle between them; a KeyboardInterrupt raised while it
waits lets the boxes already enqueued finish (two at most) and reaches the caller, and the rest never run.

The prediction is the kernel's seconds per program measured over its earlier launches; a first launch of more than
FIRST_PIECE programs is split into about FIRST_PIECES pieces. Kernels whose programs may wait for one another
(`programs_may_wait_for_each_other`) are never split: a program waiting for one of a later piece would wait forever.
"""

from __future__ import annotations

from collections.abc import Iterator

#: the longest a piece of a launch is predicted to take (and so about how long Ctrl-C waits)
PIECE_SECONDS = 0.05
#: a first launch (nothing measured yet) of at most this many programs is one enqueue
FIRST_PIECE = 256
#: a longer first launch is split into about this many pieces
FIRST_PIECES = 8

Triple = tuple[int, int, int]


def piece_programs(total: int, seconds_per_program: float | None) -> int | None:
    """Programs per piece for a launch of `total` programs, or None: one enqueue."""
    if seconds_per_program is None:
        return None if total <= FIRST_PIECE else max(FIRST_PIECE, -(-total // FIRST_PIECES))
    if seconds_per_program * total <= PIECE_SECONDS:
        return None
    return max(1, int(PIECE_SECONDS / seconds_per_program))


def boxes(grid: Triple, programs: int) -> Iterator[tuple[Triple, Triple]]:
    """(first program, programs along each axis) of the pieces of `grid`, in program order, each of at most
    `programs` programs: whole xy-planes where a plane fits, else whole rows, else runs of one row."""
    gx, gy, gz = grid
    if programs >= gx * gy:
        k = programs // (gx * gy)
        for z in range(0, gz, k):
            yield (0, 0, z), (gx, gy, min(k, gz - z))
    elif programs >= gx:
        k = programs // gx
        for z in range(gz):
            for y in range(0, gy, k):
                yield (0, y, z), (gx, min(k, gy - y), 1)
    else:
        for z in range(gz):
            for y in range(gy):
                for x in range(0, gx, programs):
                    yield (x, y, z), (min(programs, gx - x), 1, 1)


def measured(previous: float | None, seconds: float, programs: int) -> float:
    """The seconds per program to predict the next launch with, after one of `programs` that took `seconds`."""
    now = seconds / max(1, programs)
    return now if previous is None else 0.5 * (previous + now)
