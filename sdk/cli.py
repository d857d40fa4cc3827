"""The `triton-sdk` command: demo, compile with stage dumps, devices, plugins, conformance, upstream tests, fuzzing,
benchmarks and the SDK IR pass runner (`opt`).

Exit status: 0 success; 1 the command ran and found failures (wrong results, broken plugins); 2 it could not do
what was asked (a bad option, file, backend or filter, or a named SDK refusal), said on stderr without a traceback.
A traceback means a bug in the SDK.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from .errors import SDKError


class UsageError(Exception):
    """A mistake in the command line or in what it names: one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's usage block would bury the one line that matters
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _int_at_least(low: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value

    return parse


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def _backend(name: str, *, sdk: bool = False) -> Any:
    """The registered Triton backend `name` (entry point group `triton.backends`); else the registered ones named."""
    from triton.backends import backends

    if name not in backends:
        raise UsageError(f"unknown backend {name!r}; registered: {', '.join(sorted(backends))}")
    if sdk and not hasattr(backends[name].compiler, "describe"):
        ours = sorted(n for n, b in backends.items() if hasattr(b.compiler, "describe"))
        raise UsageError(f"backend {name!r} is not an SDK backend; SDK backends: {', '.join(ours)}")
    return backends[name]


def _runnable_backend(name: str) -> None:
    """An SDK backend (selectable whether or not it is the default), or another whose driver finds its device."""
    b = _backend(name)
    if not hasattr(b.compiler, "describe") and not b.driver.is_active():
        raise UsageError(f"backend {name!r} has no active device on this machine")


def _input_file(path: str | None, option: str) -> None:
    if path is not None and not os.path.isfile(path):
        raise UsageError(f"{option} {path}: {'is a directory' if os.path.isdir(path) else 'no such file'}")


def _output_file(path: str | None, option: str) -> None:
    """Checked before a long run, so that its report is not lost at the end."""
    if path is None:
        return
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory")
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise UsageError(f"{option} {path}: no such directory")


def _cmd_demo(args: argparse.Namespace) -> int:
    if args.backend:
        _runnable_backend(args.backend)
        os.environ["TRITON_DEFAULT_BACKEND"] = args.backend
    import triton

    from .demo import run_demo

    try:
        name = type(triton.runtime.driver.active).__name__
    except RuntimeError as e:  # Triton's driver choice: none or several active, or the selected one inactive
        raise UsageError(f"no driver to run on: {e}") from None
    print(f"triton {triton.__version__}, active driver: {name}")
    t0 = time.perf_counter()
    results = run_demo(size=args.size)
    print(f"{'kernel':36s} {'result':7s} {'max err':>9s} {'ours ms':>9s} {'torch ms':>9s}")
    for r in results:
        print(f"{r.name:36s} {'ok' if r.ok else 'WRONG':7s} {r.max_err:9.2e} {r.ms:9.3f} {r.torch_ms:9.3f}")
    failed = sum(not r.ok for r in results)
    print(f"{len(results) - failed} passed, {failed} failed (compile + run {time.perf_counter() - t0:.1f} s)")
    return 1 if failed else 0


def _cmd_compile(args: argparse.Namespace) -> int:
    """Compile a dumped `.ttir` or `.sdkir` file through a backend's stages after the SDK IR reader."""
    _input_file(args.file, "file")
    try:
        with open(args.file) as f:
            src: object = f.read()
    except UnicodeDecodeError:
        raise UsageError(f"{args.file} is not a text file (expected TTIR or SDK IR)") from None
    cls = _backend(args.backend, sdk=True).compiler
    backend = cls(cls.describe(None).gpu_target())
    opts = {"dump_dir": args.dump} if args.dump else {}
    options = backend.parse_options(opts)
    stages: dict = {}
    backend.add_stages(stages, options)
    names = list(stages)
    start = names.index("sdkir") + (1 if args.file.endswith(".sdkir") else 0)
    md: dict = {}
    for name in names[start:]:
        t = time.perf_counter()
        if name == "llir" and "name" not in md:
            from .backend import _kernel_func
            from .ir import parse_ttir

            md["name"] = _kernel_func(parse_ttir(str(src)), args.backend).sym_name
        src = stages[name](src, md)
        size = len(src) if isinstance(src, (bytes, str)) else 0
        print(
            f"{name:8s} {size:9d} {'bytes' if isinstance(src, bytes) else 'chars'} "
            f"{(time.perf_counter() - t) * 1000:8.1f} ms"
        )
    if args.dump:
        print(f"stages written under {args.dump}/{md.get('name', 'kernel')}/")
    return 0


def _device_rows() -> list[dict[str, Any]]:
    """Every registered backend; for an SDK backend its descriptor, whether it is active and its devices."""
    import dataclasses

    from triton.backends import backends

    rows: list[dict[str, Any]] = []
    for name, b in sorted(backends.items()):
        row: dict[str, Any] = {"name": name, "sdk": hasattr(b.compiler, "describe")}
        rows.append(row)
        if not row["sdk"]:
            continue
        try:
            d = b.compiler.describe(None)
        except Exception as e:  # noqa: BLE001 - a device that cannot be queried is reported, not fatal
            row["error"] = str(e)
            continue
        row["descriptor"] = {**dataclasses.asdict(d), "supported_dtypes": sorted(d.supported_dtypes)}
        row["active"] = bool(b.driver.is_active())
        listing = getattr(b.compiler, "devices", None)  # optional: a backend with several selectable devices
        if listing is not None:
            try:
                row["devices"] = list(listing())
            except Exception as e:  # noqa: BLE001
                row["devices_error"] = str(e)
    return rows


def _cmd_devices(args: argparse.Namespace) -> int:
    rows = _device_rows()
    if args.json:
        import triton

        print(json.dumps({"triton": triton.__version__, "backends": rows}, indent=2))
        return 0
    for r in rows:
        name = r["name"]
        if not r["sdk"]:
            print(f"{name:10s} (not an SDK backend)")
        elif "error" in r:
            print(f"{name:10s} unavailable: {r['error']}")
        else:
            d = r["descriptor"]
            print(
                f"{name:10s} arch={d['arch']} warp={d['warp_size']} units={d['num_compute_units']} "
                f"vector={d['vector_width_bits']}b active={r['active']}"
            )
            for line in r.get("devices", []):
                print(f"{'':10s} {line}")
            if "devices_error" in r:
                print(f"{'':10s} (device listing failed: {r['devices_error']})")
    return 0


def _cmd_plugins(args: argparse.Namespace) -> int:
    """Backends (`triton.backends`) and plugins (`triton_backend_sdk.plugins`, TRITON_PLUGIN_PATHS), with versions,
    the SDK API range each supports and where each comes from; an incompatible or broken one is shown, not fatal."""
    from . import API_VERSION, __version__
    from .plugins import describe_all

    rows = describe_all()
    failed = 1 if any(r.get("error") for r in rows) else 0
    if args.json:
        print(json.dumps({"sdk_version": __version__, "api_version": API_VERSION, "entries": rows}, indent=2))
        return failed
    print(f"triton-backend-sdk {__version__}, SDK API version {API_VERSION}")
    for r in rows:
        print(f"{r['kind']:13s} {r['name']:14s} {r['version']:>9s}  api {r['api']:<22s} {r['source']}")
        for key in ("passes", "ops", "native", "mlir_libraries", "path"):
            if r.get(key):
                print(f"{'':29s}{key}: {r[key]}")
        for key in ("disabled", "warning", "error"):
            if r.get(key):
                print(f"{'':29s}{key.upper()}: {r[key]}")
    return failed


def _cmd_conformance(args: argparse.Namespace) -> int:
    from .conformance.cases import all_cases
    from .conformance.runner import _progress, run, select

    if args.backend:
        _runnable_backend(args.backend)
    _input_file(args.goldens, "--goldens")
    _output_file(args.json, "--json")
    _output_file(args.junit, "--junit")
    cases = all_cases()
    if args.k is not None and not select(cases, args.k):
        (dtype, shape), case = cases[0].params()[0], cases[0]
        example = f"{case.name}[{dtype}-{'x'.join(map(str, shape))}] {case.feature}"
        raise UsageError(
            f"-k {args.k!r} selects none of the {len(select(cases, None))} runs (each word must occur in an id "
            f"like {example!r})"
        )
    report = run(
        backend=args.backend,
        reference=args.reference,
        filter=args.k,
        seed=args.seed,
        progress=None if args.quiet else _progress,
        goldens_path=args.goldens,
    )
    print(
        f"conformance: backend {report.backend}, reference {report.reference}, triton {report.meta['triton']}, "
        f"{report.meta['seconds']} s"
    )
    fallback = report.meta.get("compared_with_torch_instead", 0)
    if fallback:
        print(f"{fallback} runs had no {report.reference} result (see their messages) and were compared with torch")
    print(report.table())
    for r in report.failures()[: args.show]:
        print(f"FAIL {r.case}[{r.dtype}-{'x'.join(map(str, r.shape))}]: {r.message}")
    if args.json:
        report.to_json(args.json)
    if args.junit:
        report.to_junit(args.junit)
    print(report.closing_line())
    return 0 if report.ok else 1


def _cmd_upstream_tests(args: argparse.Namespace) -> int:
    from .upstream.manifest import ManifestError
    from .upstream.report import classify
    from .upstream.runner import RunError, readme_table, resolve_manifest, run
    from .upstream.staging import DEFAULT_FILES, StagingError

    files = tuple(args.files or DEFAULT_FILES)
    _backend(args.backend)
    _input_file(args.from_junit, "--from-junit")
    _input_file(args.ids, "--ids")
    _input_file(args.manifest, "--manifest")
    _output_file(args.json, "--json")
    _output_file(args.junit, "--junit")
    if args.sample_offset >= args.sample:
        raise UsageError(f"--sample-offset {args.sample_offset} must be below --sample {args.sample}")
    try:
        if args.from_junit:
            paths = [f if "/" in f else f"test/unit/language/{f}" for f in files]
            report = classify(
                args.from_junit,
                resolve_manifest(args.backend, args.manifest),
                paths,
                {"backend": args.backend, "sample": args.sample, "source": args.from_junit},
            )
        else:
            if not args.triton_src:
                raise UsageError("--triton-src is required (or --from-junit)")
            report = run(
                args.triton_src,
                args.backend,
                rev=args.rev,
                files=files,
                workers=args.workers,
                timeout=args.timeout,
                k=args.k,
                sample=args.sample,
                offset=args.sample_offset,
                ids_file=args.ids,
                manifest=args.manifest,
                junit=args.junit,
                work_dir=args.work_dir,
            )
    except (RunError, StagingError, ManifestError) as e:  # a selection that matches no test is a RunError too
        raise UsageError(str(e)) from None
    meta = report.meta
    if "suite" in meta:
        print(
            f"suite {meta['suite']['commit']} (version {meta['suite']['version']}) vs triton wheel "
            f"{meta['triton_wheel']}; {meta['seconds']} s with {meta['workers']} workers"
        )
    print(f"manifest: {report.manifest.path or 'none'} ({len(report.manifest.entries)} entries)")
    print(report.table(only_problems=not args.all_functions))
    errors = report.errors()
    for line in errors[: args.show]:
        print(line)
    if len(errors) > args.show:
        print(f"... and {len(errors) - args.show} more errors (--json has them all)")
    if args.json:
        report.to_json(args.json)
    if args.readme_table:
        print(readme_table(report))
    if report.meta.get("interrupted"):
        print("interrupted: the counts cover only the tests that ran before the stop")
    print(report.closing_line())
    return 0 if report.ok and not report.meta.get("interrupted") else 1


def _cmd_fuzz(args: argparse.Namespace) -> int:
    """Differential fuzzing (triton_backend_sdk.fuzz): exit 1 if any case mismatched or any backend failed."""
    from .fuzz.cli import run_command

    return run_command(args, UsageError)


def _cmd_bench(args: argparse.Namespace) -> int:
    """Benchmarks against peers (triton_backend_sdk.bench): exit 1 if a case failed or computed a wrong result."""
    from .bench.cli import run_command

    return run_command(args, UsageError)


def _version() -> str:
    import platform

    import triton

    from . import API_VERSION, __version__

    python = platform.python_version()
    return f"triton-sdk {__version__} (SDK API {API_VERSION}), triton {triton.__version__}, python {python}"


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="triton-sdk", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="compile and run real kernels, check them against torch")
    d.add_argument("--backend", default=None, help="backend to run on (default: Triton's active driver)")
    d.add_argument("--size", type=_int_at_least(1), default=1 << 20, help="elements of the 1-D kernels' inputs")
    d.set_defaults(fn=_cmd_demo)
    c = sub.add_parser("compile", help="compile a .ttir/.sdkir file through a backend's stages")
    c.add_argument("file")
    c.add_argument("--backend", default="cpu_ref")
    c.add_argument("--dump", default=None, help="write every stage's output under this directory")
    c.set_defaults(fn=_cmd_compile)
    v = sub.add_parser("devices", help="list SDK backends and their devices")
    v.add_argument("--json", action="store_true", help="print the listing as JSON")
    v.set_defaults(fn=_cmd_devices)
    k = sub.add_parser("conformance", help="run the conformance suite on a backend and report per feature")
    k.add_argument("--backend", default=None, help="backend name (default: Triton's active driver)")
    k.add_argument("--reference", default="torch", choices=("torch", "interpreter", "cuda-golden", "cuda-live"))
    k.add_argument("-k", default=None, help="only runs whose id or feature contains every word of this filter")
    k.add_argument("--seed", type=_int_at_least(0), default=0)
    k.add_argument("--json", default=None, help="write the full report as JSON")
    k.add_argument("--junit", default=None, help="write a JUnit XML report")
    k.add_argument("--goldens", default=None, help="CUDA golden file (default: the one shipped with the SDK)")
    k.add_argument("--show", type=_int_at_least(0), default=20, help="print at most this many failures")
    k.add_argument("--quiet", action="store_true", help="no progress bar")
    k.set_defaults(fn=_cmd_conformance)
    g = sub.add_parser("plugins", help="list backends and plugins with versions, API ranges and origins")
    g.add_argument("--json", action="store_true", help="print the listing as JSON")
    g.set_defaults(fn=_cmd_plugins)
    u = sub.add_parser("upstream-tests", help="run Triton's upstream language tests on a backend (--device cpu)")
    u.add_argument("--triton-src", default=None, help="a Triton source checkout or a (bare) git dir")
    u.add_argument("--rev", default=None, help="revision to stage from a git dir (default HEAD)")
    u.add_argument("--backend", required=True, help="backend name, set as TRITON_DEFAULT_BACKEND")
    u.add_argument(
        "--workers", type=_int_at_least(0), default=2, help="pytest-xdist workers (0: in-process, no crash isolation)"
    )
    u.add_argument("--timeout", type=_positive_float, default=300, help="per-test timeout in seconds (pytest-timeout)")
    u.add_argument("-k", default=None, help="pytest -k expression")
    u.add_argument("--sample", type=_int_at_least(1), default=1, help="run every STEP-th selected test")
    u.add_argument("--sample-offset", type=_int_at_least(0), default=0, help="start the sample at this index")
    u.add_argument("--ids", default=None, help="run the test ids listed in this file (one per line)")
    u.add_argument("--files", nargs="+", default=None, help="test files (default test_core/standard/random.py)")
    u.add_argument("--manifest", default=None, help="expectations manifest (default: the SDK backend's own)")
    u.add_argument("--json", default=None, help="write the report as JSON")
    u.add_argument("--junit", default=None, help="write pytest's JUnit XML here")
    u.add_argument("--work-dir", default=None, help="stage and log here and keep it (default: a removed temp dir)")
    u.add_argument("--from-junit", default=None, help="classify this JUnit XML instead of running")
    u.add_argument("--readme-table", action="store_true", help="print the counts as the README quotes them")
    u.add_argument("--all-functions", action="store_true", help="table rows for every function, not only problems")
    u.add_argument("--show", type=_int_at_least(0), default=40, help="print at most this many errors")
    u.set_defaults(fn=_cmd_upstream_tests)
    from .fuzz.cli import add_parser as _add_fuzz_parser

    _add_fuzz_parser(sub, _int_at_least, _positive_float).set_defaults(fn=_cmd_fuzz)
    from .bench.cli import add_parser as _add_bench_parser

    _add_bench_parser(sub).set_defaults(fn=_cmd_bench)
    from .opt_cli import add_parser as _add_opt_parser

    _add_opt_parser(sub).set_defaults(fn=_cmd_opt)
    return p


def _cmd_opt(args: argparse.Namespace) -> int:
    from .opt_cli import run

    if args.file:
        _input_file(args.file, "file")
    return run(args, UsageError, _backend)


def main(argv: list[str] | None = None) -> int:
    """Run one command and return its exit status (for --help, --version and a bad command line too)."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 0 if e.code is None else 2
    try:
        return args.fn(args)
    except (UsageError, SDKError) as e:
        print(f"triton-sdk {args.cmd}: error: {e}", file=sys.stderr)
    except OSError as e:
        if e.filename is None:
            raise
        print(f"triton-sdk {args.cmd}: error: {e.filename}: {e.strerror}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"triton-sdk {args.cmd}: interrupted", file=sys.stderr)
        return 130
    return 2


if __name__ == "__main__":
    sys.exit(main())
