"""`triton-sdk bench`: benchmark cases, their interleaved timing against peers, a roofline measured in the same run,
and the report writers (bench.json, bench.md, bench.png). benchmarks/ (pytest-benchmark) runs the same case bodies.

Modules: cases (what is timed), kernels, timing (interleaving), children/child (peers in their own process),
roofline, host, run (the runner), report (writers), h200 (a GPU run's JSON rendered), cli (the subcommand).
Importing this package is light: the cases import torch and Triton only when used.
"""

#: size sets: issue 4's sizes, a reduced set for --quick, and a few-kilobyte set for the unit test
MODES = ("full", "quick", "smoke")
