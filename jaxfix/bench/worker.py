"""The bench worker: `python -m jaxfix.bench.worker`, started by jaxfix/verify/runner.py as verify's worker is,
and served by the same loop (one JSON job on stdin, one JSON line per event on its own pipe, user output on
stderr). It answers each target with measure.bench_target's result."""

from __future__ import annotations

from jaxfix.bench.measure import bench_target
from jaxfix.bench.options import options_from
from jaxfix.bench.run import not_measured
from jaxfix.verify.worker import serve


def main() -> None:
    serve(lambda target, options, progress: bench_target(target, options_from(options)), not_measured)


if __name__ == "__main__":
    main()
