"""Runs the bench worker (jaxfix/bench/worker.py) through verify's runner: one worker process for all targets, a
timeout per function, and a plain-data result (measure.bench_target's dict) per target."""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from jaxfix.bench.options import BenchOptions
from jaxfix.verify import runner
from jaxfix.verify.interpreter import OWN, Interpreter
from jaxfix.verify.targets import Target


def not_measured(target: Target, reason: str, no_inputs: bool = False) -> dict[str, Any]:
    return {"target": target.id, "function": target.name, "path": target.before.path, "reason": reason, "rows": []}


WORKER = runner.Worker("jaxfix.bench.worker", lambda data: data, not_measured, name="bench worker")


def run(
    targets: Sequence[Target], options: BenchOptions, *, on_start: Callable[[Target], None] | None = None, python: Interpreter = OWN
) -> Iterator[dict[str, Any]]:
    return runner.run(targets, options, on_start=on_start, worker=WORKER, python=python)
