"""The bench worker: `python -m jaxfix.bench.worker`, started by jaxfix/verify/runner.py as verify's worker is,
and served by the same loop (one JSON job on stdin, one JSON line per event on its own pipe, user output on
stderr). It answers each target with measure.bench_target's result."""

from __future__ import annotations

from jaxfix.bench.measure import bench_target
from jaxfix.bench.options import options_from
from jaxfix.verify.worker import serve


def failed(target, reason: str) -> dict:
    return {"target": target.id, "function": target.name, "path": target.before.path, "reason": reason, "rows": []}


def main() -> None:
    serve(lambda target, options, progress: bench_target(target, options_from(options)), failed)


if __name__ == "__main__":
    main()
