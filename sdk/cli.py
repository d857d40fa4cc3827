"""The `triton-sdk` command: demo, compile with stage dumps, devices, plugins."""

from __future__ import annotations

import argparse
import os
import sys
import time


def _cmd_demo(args: argparse.Namespace) -> int:
    if args.backend:
        os.environ["TRITON_DEFAULT_BACKEND"] = args.backend
    import triton

    from .demo import run_demo

    name = type(triton.runtime.driver.active).__name__
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
    from triton.backends import backends

    if args.backend not in backends:
        print(f"unknown backend {args.backend!r}; registered: {sorted(backends)}", file=sys.stderr)
        return 2
    cls = backends[args.backend].compiler
    backend = cls(cls.describe(None).gpu_target())
    opts = {"dump_dir": args.dump} if args.dump else {}
    options = backend.parse_options(opts)
    stages: dict = {}
    backend.add_stages(stages, options)
    with open(args.file) as f:
        src: object = f.read()
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


def _cmd_devices(args: argparse.Namespace) -> int:
    from triton.backends import backends

    for name, b in sorted(backends.items()):
        describe = getattr(b.compiler, "describe", None)
        if describe is None:
            print(f"{name:10s} (not an SDK backend)")
            continue
        try:
            d = describe(None)
        except Exception as e:  # noqa: BLE001 - a device that cannot be queried is reported, not fatal
            print(f"{name:10s} unavailable: {e}")
            continue
        print(
            f"{name:10s} arch={d.arch} warp={d.warp_size} units={d.num_compute_units} vector={d.vector_width_bits}b "
            f"active={b.driver.is_active()}"
        )
        listing = getattr(b.compiler, "devices", None)  # optional: a backend with several selectable devices
        if listing is not None:
            try:
                for line in listing():
                    print(f"{'':10s} {line}")
            except Exception as e:  # noqa: BLE001
                print(f"{'':10s} (device listing failed: {e})")
    return 0


def _cmd_plugins(args: argparse.Namespace) -> int:
    """Backends (`triton.backends`) and plugins (`triton_backend_sdk.plugins`, TRITON_PLUGIN_PATHS), with versions,
    the SDK API range each supports and where each comes from; an incompatible or broken one is shown, not fatal."""
    from . import API_VERSION, __version__
    from .plugins import describe_all

    print(f"triton-backend-sdk {__version__}, SDK API version {API_VERSION}")
    rows = describe_all()
    for r in rows:
        print(f"{r['kind']:13s} {r['name']:14s} {r['version']:>9s}  api {r['api']:<22s} {r['source']}")
        for key in ("passes", "ops", "native", "path"):
            if r.get(key):
                print(f"{'':29s}{key}: {r[key]}")
        if r.get("error"):
            print(f"{'':29s}ERROR: {r['error']}")
    return 1 if any(r.get("error") for r in rows) else 0


def _cmd_conformance(args: argparse.Namespace) -> int:
    from .conformance.runner import _progress, run

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
                print("upstream-tests: --triton-src is required (or --from-junit)", file=sys.stderr)
                return 2
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
    except (RunError, StagingError, ManifestError) as e:
        print(f"upstream-tests: {e}", file=sys.stderr)
        return 2
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
    print(report.closing_line())
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="triton-sdk", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="compile and run real kernels, check them against torch")
    d.add_argument("--backend", default=None, help="backend to run on (default: Triton's active driver)")
    d.add_argument("--size", type=int, default=1 << 20)
    d.set_defaults(fn=_cmd_demo)
    c = sub.add_parser("compile", help="compile a .ttir/.sdkir file through a backend's stages")
    c.add_argument("file")
    c.add_argument("--backend", default="cpu_ref")
    c.add_argument("--dump", default=None, help="write every stage's output under this directory")
    c.set_defaults(fn=_cmd_compile)
    sub.add_parser("devices", help="list SDK backends and their devices").set_defaults(fn=_cmd_devices)
    k = sub.add_parser("conformance", help="run the conformance suite on a backend and report per feature")
    k.add_argument("--backend", default=None, help="backend name (default: Triton's active driver)")
    k.add_argument("--reference", default="torch", choices=("torch", "interpreter", "cuda-golden", "cuda-live"))
    k.add_argument("-k", default=None, help="only runs whose id or feature contains every word of this filter")
    k.add_argument("--seed", type=int, default=0)
    k.add_argument("--json", default=None, help="write the full report as JSON")
    k.add_argument("--junit", default=None, help="write a JUnit XML report")
    k.add_argument("--goldens", default=None, help="CUDA golden file (default: the one shipped with the SDK)")
    k.add_argument("--show", type=int, default=20, help="print at most this many failures")
    k.add_argument("--quiet", action="store_true", help="no progress bar")
    k.set_defaults(fn=_cmd_conformance)
    sub.add_parser("plugins", help="list backends and plugins with versions, API ranges and origins").set_defaults(
        fn=_cmd_plugins
    )
    u = sub.add_parser("upstream-tests", help="run Triton's upstream language tests on a backend (--device cpu)")
    u.add_argument("--triton-src", default=None, help="a Triton source checkout or a (bare) git dir")
    u.add_argument("--rev", default=None, help="revision to stage from a git dir (default HEAD)")
    u.add_argument("--backend", required=True, help="backend name, set as TRITON_DEFAULT_BACKEND")
    u.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (0: in-process, no crash isolation)")
    u.add_argument("--timeout", type=float, default=300, help="per-test timeout in seconds (pytest-timeout)")
    u.add_argument("-k", default=None, help="pytest -k expression")
    u.add_argument("--sample", type=int, default=1, help="run every STEP-th selected test")
    u.add_argument("--sample-offset", type=int, default=0, help="start the sample at this index (0 .. STEP-1)")
    u.add_argument("--ids", default=None, help="run the test ids listed in this file (one per line)")
    u.add_argument("--files", nargs="+", default=None, help="test files (default test_core/standard/random.py)")
    u.add_argument("--manifest", default=None, help="expectations manifest (default: the SDK backend's own)")
    u.add_argument("--json", default=None, help="write the report as JSON")
    u.add_argument("--junit", default=None, help="write pytest's JUnit XML here")
    u.add_argument("--work-dir", default=None, help="stage and log here and keep it (default: a removed temp dir)")
    u.add_argument("--from-junit", default=None, help="classify this JUnit XML instead of running")
    u.add_argument("--readme-table", action="store_true", help="print the counts as the README quotes them")
    u.add_argument("--all-functions", action="store_true", help="table rows for every function, not only problems")
    u.add_argument("--show", type=int, default=40, help="print at most this many errors")
    u.set_defaults(fn=_cmd_upstream_tests)
    args = p.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
