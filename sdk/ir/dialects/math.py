"""The `math` dialect: elementwise float functions (and a few integer ones) of the arith op families."""

from __future__ import annotations

from ..core import IRVerificationError, register_op
from ..fields import FastMathProp, Operand, Result
from ..types import is_int
from .arith import ElementwiseOp, FloatBinaryOp, FloatUnaryOp, UnaryOp, check_same_types


@register_op
class PowF(FloatBinaryOp):
    name = "math.powf"
    function = "pow"


@register_op
class Atan2(FloatBinaryOp):
    name = "math.atan2"
    function = "atan2"


@register_op
class CopySign(FloatBinaryOp):
    name = "math.copysign"
    function = "copysign"


@register_op
class Exp(FloatUnaryOp):
    name = "math.exp"
    function = "exp"


@register_op
class Exp2(FloatUnaryOp):
    name = "math.exp2"
    function = "exp2"


@register_op
class Expm1(FloatUnaryOp):
    name = "math.expm1"
    function = "expm1"


@register_op
class Log(FloatUnaryOp):
    name = "math.log"
    function = "log"


@register_op
class Log2(FloatUnaryOp):
    name = "math.log2"
    function = "log2"


@register_op
class Log10(FloatUnaryOp):
    name = "math.log10"
    function = "log10"


@register_op
class Log1p(FloatUnaryOp):
    name = "math.log1p"
    function = "log1p"


@register_op
class Sin(FloatUnaryOp):
    name = "math.sin"
    function = "sin"


@register_op
class Cos(FloatUnaryOp):
    name = "math.cos"
    function = "cos"


@register_op
class Tan(FloatUnaryOp):
    name = "math.tan"
    function = "tan"


@register_op
class Asin(FloatUnaryOp):
    name = "math.asin"
    function = "asin"


@register_op
class Acos(FloatUnaryOp):
    name = "math.acos"
    function = "acos"


@register_op
class Atan(FloatUnaryOp):
    name = "math.atan"
    function = "atan"


@register_op
class Sinh(FloatUnaryOp):
    name = "math.sinh"
    function = "sinh"


@register_op
class Cosh(FloatUnaryOp):
    name = "math.cosh"
    function = "cosh"


@register_op
class Tanh(FloatUnaryOp):
    name = "math.tanh"
    function = "tanh"


@register_op
class Asinh(FloatUnaryOp):
    name = "math.asinh"
    function = "asinh"


@register_op
class Acosh(FloatUnaryOp):
    name = "math.acosh"
    function = "acosh"


@register_op
class Atanh(FloatUnaryOp):
    name = "math.atanh"
    function = "atanh"


@register_op
class Sqrt(FloatUnaryOp):
    name = "math.sqrt"
    function = "sqrt"


@register_op
class Rsqrt(FloatUnaryOp):
    name = "math.rsqrt"


@register_op
class Cbrt(FloatUnaryOp):
    name = "math.cbrt"
    function = "cbrt"


@register_op
class AbsF(FloatUnaryOp):
    name = "math.absf"
    function = "fabs"


@register_op
class Floor(FloatUnaryOp):
    name = "math.floor"
    function = "floor"


@register_op
class Ceil(FloatUnaryOp):
    name = "math.ceil"
    function = "ceil"


@register_op
class Trunc(FloatUnaryOp):
    name = "math.trunc"
    function = "trunc"


@register_op
class Round(FloatUnaryOp):
    name = "math.round"
    function = "round"


@register_op
class RoundEven(FloatUnaryOp):
    name = "math.roundeven"
    function = "rint"


@register_op
class Erf(FloatUnaryOp):
    name = "math.erf"
    function = "erf"


@register_op
class Erfc(FloatUnaryOp):
    name = "math.erfc"
    function = "erfc"


class IntUnaryOp(UnaryOp):
    def verify_(self) -> None:
        super().verify_()
        if not is_int(self.result.type):
            raise IRVerificationError(f"needs an integer operand, not {self.result.type}", self)


@register_op
class AbsI(IntUnaryOp):
    name = "math.absi"


@register_op
class CountLeadingZeros(IntUnaryOp):
    name = "math.ctlz"


@register_op
class CountTrailingZeros(IntUnaryOp):
    name = "math.cttz"


@register_op
class CtPop(IntUnaryOp):
    name = "math.ctpop"


@register_op
class Fma(ElementwiseOp):
    """`math.fma %a, %b, %c : T` = a * b + c."""

    name = "math.fma"
    function = "fma"
    a = Operand()
    b = Operand()
    c = Operand()
    result = Result()
    fastmath = FastMathProp()
    assembly_format = "$a, $b, $c (fastmath$fastmath)? attr-dict : type($result)"

    @classmethod
    def infer_result_types(cls, types, attrs):  # type: ignore[no-untyped-def]
        return types["a"][:1]

    def verify_(self) -> None:
        check_same_types(self, [self.a, self.b, self.c, self.result])
