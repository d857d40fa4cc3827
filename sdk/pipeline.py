"""Compilation pipeline: ordered named stages with injection points, Python IR passes, Triton C++ passes, dumps.

A stage has Triton's `add_stages` shape, `(src, metadata) -> src`; its name is also the file extension Triton's cache
uses for its output. Around every stage there are two injection points, `before:<stage>` and `after:<stage>`; inside
the SDK IR stage every pass has `before-pass:<pass>` and `after-pass:<pass>`, and inside the TTIR stage every Triton
pass has `before-pass:ttir.<pass>` and `after-pass:ttir.<pass>`. Something injected at a point is a hook
`(src, metadata) -> src | None` (stage points), an `IRPass` (SDK IR pass points; stage points too, where it runs on the
SDK IR of that stage's output) or a `TritonPass` (a Triton C++ pass, at TTIR pass points).

One mechanism serves every source of passes: plugins (sdk/plugins.py) inject through `inject()` too. Injecting or
removing something drops Triton's in-memory kernel caches, whose keys do not include the backend's hash.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from .descriptor import TargetDescriptor
    from .ir.core import Module
    from .options import Options

StageFn = Callable[[Any, dict], Any]
Hook = Callable[[Any, dict], Any]


@dataclass
class PassContext:
    """What a pass may read: the compile options, the target, and the metadata dict Triton stores with the kernel."""

    options: Options
    target: TargetDescriptor
    metadata: dict


class IRPass(abc.ABC):
    """A transformation of the SDK IR, written in Python. Subclasses set `name` and implement `run`.

    Prefer `@ir_pass(name=...)` on a frozen dataclass (the fields are the pass's typed options) or on a function.
    """

    name: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("name"):  # `@ir_pass` registers the classes it names itself
            from .pass_registry import register

            register(cls)

    @abc.abstractmethod
    def run(self, module: Module, ctx: PassContext) -> None:
        """Rewrite `module` in place."""


def ir_pass(name: str, options: type | None = None) -> Callable[[Any], Any]:
    """Declare an SDK IR pass named `name` (its injection points are `before-pass:<name>`/`after-pass:<name>`).

    On a class with `run(self, module, ctx)`: the class becomes a frozen dataclass and an `IRPass`; its fields are
    the pass's options, so `MyPass(threshold=8)` is an instance with those options and its identity (cache key)
    includes them. On a function `fn(module, ctx, opts)`: returns a pass class whose instances carry an `opts` of
    the frozen dataclass `options` (`MyPass(threshold=8)` builds it), so both spellings configure the same way.
    """
    if not name or not isinstance(name, str):
        raise ValueError(f"an IR pass needs a non-empty string name, got {name!r}")

    def deco(obj: Any) -> Any:
        if inspect.isclass(obj):
            if options is not None:
                raise TypeError(f"pass {name!r}: a pass class carries its options as its own dataclass fields")
            if not callable(getattr(obj, "run", None)):
                raise TypeError(f"pass class {obj.__qualname__} has no run(self, module, ctx) method")
            cls = obj if dataclasses.is_dataclass(obj) else dataclass(frozen=True)(obj)
            if not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
                raise TypeError(f"pass {name!r}: options must be a frozen dataclass (they are part of the cache key)")
            if not issubclass(cls, IRPass):
                cls = type(
                    cls.__name__,
                    (cls, IRPass),
                    {"__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__},
                )
            cls.name = name
            dataclass_init = cls.__init__

            @functools.wraps(dataclass_init)
            def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
                dataclass_init(self, *args, **kwargs)
                check_options(name, self)

            cls.__init__ = __init__  # type: ignore[method-assign]
            from .pass_registry import register

            register(cls)
            return cls
        if not callable(obj):
            raise TypeError(f"@ir_pass applies to a class or a function, not {obj!r}")
        opts_cls = options
        if opts_cls is not None and not (dataclasses.is_dataclass(opts_cls) and opts_cls.__dataclass_params__.frozen):  # type: ignore[attr-defined]
            raise TypeError(f"pass {name!r}: options must be a frozen dataclass, got {opts_cls!r}")
        fn = obj

        class FunctionPass(IRPass):
            __doc__ = fn.__doc__

            def __init__(self, opts: Any = None, **kwargs: Any) -> None:
                if opts is not None and kwargs:
                    raise TypeError(f"pass {name!r}: give an options object or keyword options, not both")
                if opts_cls is None:
                    if opts is not None or kwargs:
                        raise TypeError(f"pass {name!r} takes no options")
                else:
                    opts = opts if opts is not None else opts_cls(**kwargs)
                    if not isinstance(opts, opts_cls):
                        raise TypeError(f"pass {name!r}: options must be {opts_cls.__qualname__}, got {opts!r}")
                    check_options(name, opts)
                self.opts = opts

            def run(self, module: Module, ctx: PassContext) -> None:
                if opts_cls is None:
                    fn(module, ctx)
                else:
                    fn(module, ctx, self.opts)

            def __repr__(self) -> str:
                return f"{name}({self.opts!r})" if opts_cls is not None else f"{name}()"

        FunctionPass.name = name
        FunctionPass.__name__ = FunctionPass.__qualname__ = getattr(fn, "__name__", "FunctionPass")
        FunctionPass.__module__ = getattr(fn, "__module__", __name__)
        FunctionPass.function = staticmethod(fn)  # type: ignore[attr-defined]
        FunctionPass.options_class = opts_cls  # type: ignore[attr-defined]
        from .pass_registry import register

        register(FunctionPass)
        return FunctionPass

    return deco


def check_options(pass_name: str, opts: Any) -> None:
    """Reject an option whose value does not have its declared type (plain classes and `X | None` are checked;
    other annotations are trusted), naming the pass, the option and both types."""
    import types
    import typing

    try:
        hints = typing.get_type_hints(type(opts))
    except Exception:  # noqa: BLE001 - unresolvable annotations are the author's business, not a compile error
        return
    for f in dataclasses.fields(opts):
        hint = hints.get(f.name)
        allowed: tuple[type, ...]
        if isinstance(hint, type):
            allowed = (hint,)
        elif isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
            args = typing.get_args(hint)
            if not all(isinstance(a, type) for a in args):
                continue
            allowed = args
        else:
            continue
        value = getattr(opts, f.name)
        if float in allowed and isinstance(value, int) and not isinstance(value, bool):
            continue
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed and int in allowed):
            want = " | ".join(a.__name__ for a in allowed)
            raise TypeError(f"pass {pass_name!r}: option {f.name} must be {want}, got {type(value).__name__} {value!r}")


@dataclass(frozen=True)
class TritonPass:
    """A Triton C++ pass (`passes.plugin.add_<pass_name>` after loading `library`, or any `passes.<group>.add_*`),
    injectable at a TTIR pass point (`before-pass:ttir.<name>`/`after-pass:ttir.<name>`).

    `library` None means the pass is already in Triton's bindings (`pass_name` is then `group.add_x`, e.g.
    `common.add_licm`). The library's content hash is part of the cache key.
    """

    pass_name: str = "add_plugin"
    library: str | None = None
    args: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.pass_name

    def add_to(self, pm: Any) -> None:
        from .plugins import triton_pass_adder

        add = triton_pass_adder(self.library, self.pass_name)
        if self.args:
            add(pm, list(self.args))
        else:
            add(pm)

    def identity(self) -> str:
        from .plugins import file_digest

        lib = f"{self.library}@{file_digest(self.library)}" if self.library else "triton"
        return f"{lib}:{self.pass_name}{list(self.args)}"


@dataclass
class Stage:
    name: str
    fn: StageFn


@dataclass
class Injection:
    point: str
    item: Hook | IRPass
    #: backend names this applies to; empty: every SDK backend
    backends: tuple[str, ...] = ()
    #: who injected it (a plugin's name and version), for errors
    origin: str = ""

    def applies_to(self, backend: str) -> bool:
        return not self.backends or backend in self.backends

    def describe(self) -> str:
        return f"injection at {self.point!r}" + (f" by {self.origin}" if self.origin else "")


#: what crosses a stage boundary, as `TargetBackend.stage_forms` names it: Triton's MLIR module (the TTIR stage's
#: input and output) or IR text the SDK reads (TTIR / SDK IR); any other name (LLVM IR, OpenCL C, a binary) is opaque
TRITON_MLIR = "triton-mlir"
IR = "ir"


def ir_pass_stage_points(forms: dict[str, tuple[str, str]]) -> list[str]:
    """The stage points where an SDK IR pass can run: it reads the value there as IR and hands on IR text, so the
    value must be IR (or Triton's module) and what consumes it must take IR text."""
    names = list(forms)
    points = [f"before:{n}" for n in names if forms[n][0] == IR]
    for i, n in enumerate(names[:-1]):
        if forms[n][1] in (IR, TRITON_MLIR) and forms[names[i + 1]][0] == IR:
            points.append(f"after:{n}")
    return sorted(points, key=lambda pt: (names.index(pt.partition(":")[2]), not pt.startswith("before")))


def stage_point_problem(point: str, item: Any, forms: dict[str, tuple[str, str]]) -> str | None:
    """Why `item` cannot run at stage point `point` of a pipeline with these stage forms, or None."""
    kind, _, anchor = point.partition(":")
    if kind.endswith("-pass"):
        return None
    if anchor not in forms:
        return f"no stage {anchor!r} (stages: {list(forms)})"
    if isinstance(item, IRPass) and point not in (valid := ir_pass_stage_points(forms)):
        takes, gives = forms[anchor]
        there = takes if kind == "before" else gives
        return (
            f"an SDK IR pass cannot run at {point!r} (the value there is {there}, or the next stage does not take IR "
            f"text); its stage points are {valid}, its pass points before-pass:/after-pass:<pass>; a hook "
            f"(src, metadata) -> src can run at any stage point"
        )
    return None


def sdk_backend_classes() -> dict[str, type]:
    """The registered Triton backends that are SDK backends, by name (their classes; nothing is instantiated)."""
    from triton.backends import backends

    from .backend import TargetBackend

    return {
        n: b.compiler
        for n, b in backends.items()
        if isinstance(b.compiler, type) and issubclass(b.compiler, TargetBackend)
    }


def check_stage_point(point: str, item: Any, backends: tuple[str, ...]) -> None:
    """Refuse, at inject time, a stage point that a registered SDK backend it applies to lacks or where the item
    cannot run (an IR pass on LLVM IR or OpenCL C): before, such an injection broke each compile of the backend that
    lacked the stage with a KeyError naming no plugin, or ran a pass on text it could not read."""
    classes = sdk_backend_classes()
    bad = {}
    for name in backends or tuple(classes):
        if name in classes:
            problem = stage_point_problem(point, item, classes[name].stage_forms)
            if problem:
                bad[name] = problem
    if bad:
        hint = "" if backends else "; inject with backends=(...) naming the backends that have the point"
        raise ValueError(f"injection at {point!r}: " + "; ".join(f"{n}: {p}" for n, p in bad.items()) + hint)


_INJECTIONS: list[Injection] = []


def inject(
    point: str, item: Hook | IRPass | TritonPass, backends: tuple[str, ...] | str = (), origin: str = ""
) -> Injection:
    """Add a hook or a pass at a named point of every (or the named) SDK backend's pipeline, for later compiles.

    Points: `before:<stage>`, `after:<stage>`, `before-pass:<pass>`, `after-pass:<pass>`; a `TritonPass` goes only at
    `before-pass:ttir.<pass>`/`after-pass:ttir.<pass>`. Triton's in-memory kernel caches are dropped, so kernels
    launched afterwards are looked up again under the new cache key (recompiled unless Triton's disk cache has them).
    """
    kind, _, anchor = point.partition(":")
    if kind not in ("before", "after", "before-pass", "after-pass") or not anchor:
        raise ValueError(f"injection point {point!r} must be before:|after:<stage> or before-pass:|after-pass:<pass>")
    if isinstance(item, TritonPass):
        if not (kind.endswith("-pass") and anchor.startswith(TTIR_PREFIX)):
            raise TypeError(
                f"a Triton C++ pass runs in the TTIR stage: inject it at before-pass:|after-pass:"
                f"{TTIR_PREFIX}<pass>, not at {point!r}"
            )
    elif kind.endswith("-pass") and not isinstance(item, IRPass):
        raise TypeError(f"only an IRPass or a TritonPass can be injected at {point!r}, got {item!r}")
    elif anchor.startswith(TTIR_PREFIX) and kind.endswith("-pass"):
        raise TypeError(f"{point!r} is a point between Triton C++ passes: inject a TritonPass there, not {item!r}")
    names = (backends,) if isinstance(backends, str) else tuple(backends)
    check_stage_point(point, item, names)
    inj = Injection(point, item, names, origin)
    _INJECTIONS.append(inj)
    _changed()
    return inj


def remove_injection(inj: Injection) -> None:
    _INJECTIONS.remove(inj)
    _changed()


def _changed() -> None:
    from .plugins import invalidate

    invalidate()


#: TTIR pass points are named `ttir.<pass>` so that they never collide with SDK IR pass names
TTIR_PREFIX = "ttir."


def injections_for(backend: str) -> list[Injection]:
    return [i for i in _INJECTIONS if i.applies_to(backend)]


def injection_identity(backend: str) -> str:
    """Part of the cache key: what is injected changes what is compiled."""
    return ";".join(f"{i.point}={_identity(i.item)}" for i in injections_for(backend))


def _identity(item: Any) -> str:
    """Who the item is, with what options, and the code it runs: its module and every module that imports, its
    plain captured values and its `cache_key()` (sdk/code_identity.py), so an edited pass or helper recompiles."""
    from .code_identity import code_identity

    if isinstance(item, TritonPass):
        return item.identity()
    if isinstance(item, IRPass):
        state = repr(item) if dataclasses.is_dataclass(item) or hasattr(item, "opts") else getattr(item, "__dict__", "")
        return f"{item.name}:{state}:{code_identity(item)}"
    return code_identity(item)


@dataclass
class PassManager:
    """Runs IR passes in order, with the `before-pass:`/`after-pass:` injection points around each."""

    passes: list[IRPass] = field(default_factory=list)

    def names(self) -> list[str]:
        return [p.name for p in self.passes]

    def run(self, module: Module, ctx: PassContext, injections: list[Injection]) -> None:
        for p in self.passes:
            for extra in _at(injections, f"before-pass:{p.name}"):
                extra.run(module, ctx)  # type: ignore[union-attr]
            p.run(module, ctx)
            for extra in _at(injections, f"after-pass:{p.name}"):
                extra.run(module, ctx)  # type: ignore[union-attr]


def known_ir_pass_names() -> set[str]:
    """The names of every SDK IR pass class defined in this process (the SDK's, the backends', plugins')."""
    names: set[str] = set()
    todo = list(IRPass.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.name:
            names.add(cls.name)
    return names


def check_pass_points(injections: list[Injection], ran: list[str]) -> None:
    """An injection at `before-pass:`/`after-pass:` of an SDK IR pass that no pass is named (a misspelling) would
    never run and say nothing: refused here, after a compile's passes are built, naming the points there are."""
    known = known_ir_pass_names() | set(ran)
    for inj in injections:
        kind, _, anchor = inj.point.partition(":")
        if kind.endswith("-pass") and not anchor.startswith(TTIR_PREFIX) and anchor not in known:
            raise KeyError(
                f"injection at {inj.point!r}: no SDK IR pass is named {anchor!r}; the passes of this compile are "
                f"{ran} (points before-pass:<name> / after-pass:<name>; Triton's TTIR passes are "
                f"{TTIR_PREFIX}<name>)"
            )


def _at(injections: list[Injection], point: str) -> list[Any]:
    return [i.item for i in injections if i.point == point]


def triton_passes_at(injections: list[Injection], point: str) -> list[TritonPass]:
    return [i for i in _at(injections, point) if isinstance(i, TritonPass)]


class Pipeline:
    """An ordered list of named stages that a backend builds once per compile and installs into Triton's dict."""

    def __init__(self, stages: list[Stage], forms: dict[str, tuple[str, str]] | None = None) -> None:
        self.stages = list(stages)
        #: (takes, gives) of each stage by name (`TargetBackend.stage_forms`)
        self.forms = dict(forms or {})

    def names(self) -> list[str]:
        return [s.name for s in self.stages]

    def _index(self, name: str) -> int:
        for i, s in enumerate(self.stages):
            if s.name == name:
                return i
        raise KeyError(f"no stage {name!r}; stages are {self.names()}")

    def insert_before(self, anchor: str, stage: Stage) -> None:
        self.stages.insert(self._index(anchor), stage)

    def insert_after(self, anchor: str, stage: Stage) -> None:
        self.stages.insert(self._index(anchor) + 1, stage)

    def replace(self, name: str, fn: StageFn) -> None:
        self.stages[self._index(name)] = Stage(name, fn)

    def install(
        self,
        stages: dict,
        injections: list[Injection],
        run_ir_pass: Callable[[IRPass, Any, dict], Any],
        dump_dir: str | None,
    ) -> None:
        """Fill Triton's `stages` dict, wrapping each stage with its injection points and the stage dump.

        The injections are checked against this compile's stages (a backend may add stages; one it does not declare
        in `stage_forms` is opaque: hooks only)."""
        forms = {n: self.forms.get(n, ("?", "?")) for n in self.names()}
        for inj in injections:
            problem = stage_point_problem(inj.point, inj.item, forms)
            if problem:
                raise KeyError(f"{inj.describe()}: {problem}")
        for index, stage in enumerate(self.stages):
            stages[stage.name] = _wrap(index, stage, injections, run_ir_pass, dump_dir)


def _wrap(
    index: int,
    stage: Stage,
    injections: list[Injection],
    run_ir_pass: Callable[[IRPass, Any, dict], Any],
    dump_dir: str | None,
) -> StageFn:
    before = _at(injections, f"before:{stage.name}")
    after = _at(injections, f"after:{stage.name}")

    def apply(items: list[Any], src: Any, metadata: dict) -> Any:
        for item in items:
            if isinstance(item, IRPass):
                src = run_ir_pass(item, src, metadata)
            else:
                out = item(src, metadata)
                src = src if out is None else out
        return src

    def run(src: Any, metadata: dict) -> Any:
        src = apply(before, src, metadata)
        out = stage.fn(src, metadata)
        out = apply(after, out, metadata)
        if dump_dir:
            dump_stage(dump_dir, metadata.get("name", "kernel"), index, stage.name, out)
        return out

    run.__name__ = f"stage_{stage.name}"
    return run


def dump_stage(dump_dir: str, kernel: str, index: int, name: str, out: Any) -> str:
    folder = os.path.join(dump_dir, kernel)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{index:02d}-{name}.{name}")
    if isinstance(out, (bytes, bytearray)):
        with open(path, "wb") as f:
            f.write(out)
    else:
        with open(path, "w") as f:
            f.write(out if isinstance(out, str) else str(out))
    return path
