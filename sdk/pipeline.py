"""Compilation pipeline: ordered named stages with injection points, Python IR passes, Triton C++ passes, dumps.

A stage has Triton's `add_stages` shape, `(src, metadata) -> src`; its name is also the file extension Triton's cache
uses for its output. Around every stage there are two injection points, `before:<stage>` and `after:<stage>`; inside
the SDK IR stage every pass has `before-pass:<pass>` and `after-pass:<pass>`. Something injected at a point is either
a hook `(src, metadata) -> src | None` (stage points) or an `IRPass` (pass points; stage points too, where it runs on
the SDK IR of that stage's output).
"""

from __future__ import annotations

import abc
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

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
    """A transformation of the SDK IR, written in Python. Subclasses set `name` and implement `run`."""

    name: ClassVar[str] = ""

    @abc.abstractmethod
    def run(self, module: Module, ctx: PassContext) -> None:
        """Rewrite `module` in place."""


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

    def applies_to(self, backend: str) -> bool:
        return not self.backends or backend in self.backends


_INJECTIONS: list[Injection] = []


def inject(point: str, item: Hook | IRPass, backends: tuple[str, ...] | str = ()) -> Injection:
    """Add a hook or an IR pass at a named point of every (or the named) SDK backend's pipeline, for later compiles.

    Points: `before:<stage>`, `after:<stage>`, `before-pass:<pass>`, `after-pass:<pass>`.
    """
    kind, _, anchor = point.partition(":")
    if kind not in ("before", "after", "before-pass", "after-pass") or not anchor:
        raise ValueError(f"injection point {point!r} must be before:|after:<stage> or before-pass:|after-pass:<pass>")
    if kind.endswith("-pass") and not isinstance(item, IRPass):
        raise TypeError(f"only an IRPass can be injected at {point!r}, got {item!r}")
    inj = Injection(point, item, (backends,) if isinstance(backends, str) else tuple(backends))
    _INJECTIONS.append(inj)
    return inj


def remove_injection(inj: Injection) -> None:
    _INJECTIONS.remove(inj)


def injections_for(backend: str) -> list[Injection]:
    return [i for i in _INJECTIONS if i.applies_to(backend)]


def injection_identity(backend: str) -> str:
    """Part of the cache key: what is injected changes what is compiled."""
    return ";".join(f"{i.point}={_identity(i.item)}" for i in injections_for(backend))


def _identity(item: Any) -> str:
    if isinstance(item, IRPass):
        return f"{type(item).__module__}.{type(item).__qualname__}:{item.name}:{getattr(item, '__dict__', '')}"
    return f"{getattr(item, '__module__', '')}.{getattr(item, '__qualname__', repr(item))}"


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


def _at(injections: list[Injection], point: str) -> list[Any]:
    return [i.item for i in injections if i.point == point]


class Pipeline:
    """An ordered list of named stages that a backend builds once per compile and installs into Triton's dict."""

    def __init__(self, stages: list[Stage]) -> None:
        self.stages = list(stages)

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

    def install(self, stages: dict, injections: list[Injection], run_ir_pass: Callable[[IRPass, Any, dict], Any],
                dump_dir: str | None) -> None:
        """Fill Triton's `stages` dict, wrapping each stage with its injection points and the stage dump."""
        known = set(self.names())
        for inj in injections:
            kind, _, anchor = inj.point.partition(":")
            if not kind.endswith("-pass") and anchor not in known:
                raise KeyError(f"injection at {inj.point!r}: no stage {anchor!r}; stages are {self.names()}")
        for index, stage in enumerate(self.stages):
            stages[stage.name] = _wrap(index, stage, injections, run_ir_pass, dump_dir)


def _wrap(index: int, stage: Stage, injections: list[Injection], run_ir_pass: Callable[[IRPass, Any, dict], Any],
          dump_dir: str | None) -> StageFn:
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
