"""`libm.*`: C math library functions as elementwise ops, for what the MLIR math dialect has no op.

Each class names one C function (`function` is the double version's C name; the float version is that name + `f`,
as in C). Backends render them natively: cpu_ref calls the C math library (or an LLVM intrinsic), OpenCL C calls the
built-in of the same name. `sdk/transforms/math_library.py` emits them for Triton's `__nv_*` libdevice functions and
expands the ones a backend has no rule for (Bessel functions, sinpi/cospi) into portable SDK IR.

They read and print in MLIR's generic form: `%y = "libm.hypot"(%a, %b) : (f32, f32) -> f32`; their fields name the
operands in C's order (`x`, `y`, `n`).
"""

from __future__ import annotations

from typing import ClassVar

from ..fields import Operand, Result
from ..ops import ElementwiseOp, register_op


class LibmOp(ElementwiseOp):
    """A C math function applied elementwise (`function`, ElementwiseOp's: `hypot`, on floats `hypotf`); the result
    has the type of the float operand."""

    #: operand kinds in order: "f" a float of the result's type, "i" an i32
    signature: ClassVar[tuple[str, ...]] = ("f",)


class LibmUnary(LibmOp):
    signature = ("f",)
    x = Operand()
    result = Result()


class LibmBinary(LibmOp):
    signature = ("f", "f")
    x = Operand()
    y = Operand()
    result = Result()


class LibmOrderAndX(LibmOp):
    """A function of an integer order n and a float x, in C's argument order: `jn(n, x)`."""

    signature = ("i", "f")
    n = Operand()
    x = Operand()
    result = Result()


@register_op
class Exp10(LibmUnary):
    name = "libm.exp10"
    function = "exp10"


@register_op
class Lgamma(LibmUnary):
    name = "libm.lgamma"
    function = "lgamma"


@register_op
class Tgamma(LibmUnary):
    name = "libm.tgamma"
    function = "tgamma"


@register_op
class Logb(LibmUnary):
    name = "libm.logb"
    function = "logb"


@register_op
class SinPi(LibmUnary):
    """sin(πx) (C23, OpenCL C); exact argument reduction, unlike sin(x·π)."""

    name = "libm.sinpi"
    function = "sinpi"


@register_op
class CosPi(LibmUnary):
    name = "libm.cospi"
    function = "cospi"


@register_op
class J0(LibmUnary):
    name = "libm.j0"
    function = "j0"


@register_op
class J1(LibmUnary):
    name = "libm.j1"
    function = "j1"


@register_op
class Y0(LibmUnary):
    name = "libm.y0"
    function = "y0"


@register_op
class Y1(LibmUnary):
    name = "libm.y1"
    function = "y1"


@register_op
class Hypot(LibmBinary):
    name = "libm.hypot"
    function = "hypot"


@register_op
class Remainder(LibmBinary):
    name = "libm.remainder"
    function = "remainder"


@register_op
class NextAfter(LibmBinary):
    name = "libm.nextafter"
    function = "nextafter"


@register_op
class Ldexp(LibmOp):
    """ldexp(x, n) = x·2^n for an i32 n."""

    name = "libm.ldexp"
    function = "ldexp"
    signature = ("f", "i")
    x = Operand()
    n = Operand()
    result = Result()


@register_op
class Jn(LibmOrderAndX):
    """jn(n, x): Bessel function of the first kind of integer order n."""

    name = "libm.jn"
    function = "jn"


@register_op
class Yn(LibmOrderAndX):
    """yn(n, x): Bessel function of the second kind of integer order n."""

    name = "libm.yn"
    function = "yn"


#: every libm op class
LIBM_OPS: tuple[type[LibmOp], ...] = (
    Exp10,
    Lgamma,
    Tgamma,
    Logb,
    SinPi,
    CosPi,
    J0,
    J1,
    Y0,
    Y1,
    Hypot,
    Remainder,
    NextAfter,
    Ldexp,
    Jn,
    Yn,
)
