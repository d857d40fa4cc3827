"""The f32 polynomial fits behind the backends' inline math (cpu_ref's codegen/vmath_more.py, opencl's render/vmath.py on
CPU devices): least-squares fits of relative error on Chebyshev nodes in float64, rounded to f32. Each backend
writes the same algorithm in its own language; the coefficients and the points where the formulas change live here,
once. The algorithms and their measured error bounds are described in backends/cpu_ref/codegen/vmath_more.py.
"""

from __future__ import annotations

#: ln 2 in two parts: LN2_HI has few mantissa bits, so n * LN2_HI is exact for |n| < 2^11 (exp's and log's reductions)
LN2_HI = 0.693145751953125
LN2_LO = 1.4286068203094172e-06
#: tanh(x) = x + x^3 * P(x^2) for |x| < TANH_SMALL; 1 - 2 / (e^(2|x|) + 1) above
TANH_SMALL = 0.9
TANH_P = [
    -0.33333322405815125,
    0.1333295851945877,
    -0.05392777919769287,
    0.02165820263326168,
    -0.008254949934780598,
    0.0025741253048181534,
    -0.00045247015077620745,
]
ERF_SMALL = 0.9
ERF_BIG = 3.92
ERF_Q = [
    0.12837916612625122,
    -0.37612634897232056,
    0.11283714324235916,
    -0.026860462501645088,
    0.005203751381486654,
    -0.0008174467948265374,
    8.50832584546879e-05,
]
ERF_R = [
    0.0003077876172028482,
    -1.13018798828125,
    -0.6318956613540649,
    -0.11002206802368164,
    0.026392444968223572,
    -0.0047509940341115,
    0.0005952863139100373,
    -4.591501783579588e-05,
    1.6317740119120572e-06,
]
LOG_S = [
    0.3333331048488617,
    -0.25000014901161194,
    0.20002204179763794,
    -0.16667644679546356,
    0.14217887818813324,
    -0.12411259859800339,
    0.11904734373092651,
    -0.11646504700183868,
    0.066753089427948,
]

__all__ = ["ERF_BIG", "ERF_Q", "ERF_R", "ERF_SMALL", "LN2_HI", "LN2_LO", "LOG_S", "TANH_P", "TANH_SMALL"]
