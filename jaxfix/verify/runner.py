"""Runs the worker (worker.py) in a subprocess and collects its reports, with a timeout per function.

`jaxfix bench` runs its own worker (jaxfix/bench/worker.py) through the same machinery: a `Worker` names the
module to start, how to read its reports, and what to answer for a target it could not run.

One worker serves many targets (JAX is imported once, and modules once per file). A target that runs past
`Options.timeout` has its worker killed (its whole process group) and is reported unverified; a fresh worker
takes the remaining targets. A worker that dies (a segfault in user code, os._exit) costs the same: the target
it was on is reported with the last lines it wrote to stderr.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from jaxfix.verify.interpreter import OWN, Interpreter
from jaxfix.verify.interpreter import worker_env as interpreter_env
from jaxfix.verify.targets import Options, Report, Target, report_from, to_json

STDERR_TAIL = 5  # lines of the worker's stderr shown when it dies


@dataclass(frozen=True)
class Worker:
    """Which worker to start (`python -m module`), how to read a report it sends, and the answer for a target it
    could not run (`failed(target, reason, no_inputs)`)."""

    module: str
    parse: Callable[[dict], Any]
    failed: Callable[[Target, str, bool], Any]
    name: str = "verification worker"  # in "the verification worker died"
    compile_cache: bool = False  # JAX's persistent compilation cache in the run's scratch folder (see worker_env)


VERIFY = Worker(
    "jaxfix.verify.worker",
    report_from,
    lambda target, reason, no_inputs: Report(target=target.id, name=target.name, reason=reason, no_inputs=no_inputs),
    compile_cache=True,
)


def worker_env(scratch: str, compile_cache: bool) -> dict[str, str]:
    """The worker's environment. Hypothesis keeps its files in `scratch`, not in a .hypothesis folder in the user's
    working directory. With `compile_cache`, so does JAX's persistent compilation cache, for every compile
    however short: an original that builds a new jit or shard_map on each call (the anti-pattern a rewrite
    removes) compiles the same program once per example, and the cache turns the repeats into reads (corpus case
    `jit_in_loop/inline_lambda`: 563 compiles of 3 distinct programs; XLA compile time 13 s -> 2 s, the whole
    function 22 s -> 12 s on a 2-core machine).
    The cache key is the whole program, so a hit is the executable a compile would give. A cache the user
    configured (JAX_COMPILATION_CACHE_DIR) is left as it is; `jaxfix bench` measures compiles and uses none."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HYPOTHESIS_STORAGE_DIRECTORY": scratch}
    if compile_cache and "JAX_COMPILATION_CACHE_DIR" not in os.environ:
        env["JAX_COMPILATION_CACHE_DIR"] = os.path.join(scratch, "jax-compilation-cache")
        env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    return env


def run(
    targets: Sequence[Target],
    options: Any,
    *,
    on_start: Callable[[Target], None] | None = None,
    worker: Worker = VERIFY,
    python: Interpreter = OWN,
) -> Iterator[Any]:
    """A report per target, in order. A target with no source of inputs is answered here, without a worker.
    `options` is sent to the worker as JSON; its `timeout` is the limit per target. The worker runs with `python`
    (see interpreter.py: the project's interpreter, which need not have jaxfix installed)."""
    runnable = [t for t in targets if t.sources]
    reports = _run_all(runnable, options, on_start, worker, python)
    for target in targets:
        if target.sources:
            yield next(reports)
        else:
            yield worker.failed(target, target.missing or "no source of inputs", True)


def _run_all(targets: list[Target], options: Any, on_start, worker: Worker, python: Interpreter) -> Iterator[Any]:
    remaining = list(targets)
    while remaining:
        done = yield from _run_worker(remaining, options, on_start, worker, python)
        remaining = remaining[done:]


def _run_worker(targets: list[Target], options: Any, on_start, worker: Worker, python: Interpreter) -> Iterator[Any]:
    """Reports from one worker, until it finishes or fails; returns how many targets it answered for."""
    job = json.dumps({"options": to_json(options), "targets": [to_json(t) for t in targets]})
    with tempfile.TemporaryFile(mode="w+b") as stderr, tempfile.TemporaryDirectory(prefix="jaxfix-verify-") as scratch:
        env = interpreter_env(python, worker_env(scratch, worker.compile_cache))
        process = subprocess.Popen(
            [python.executable, "-m", worker.module],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,  # its own process group: a timeout kills what user code started, too
            env=env,
        )
        lines: queue.Queue = queue.Queue()
        reader = threading.Thread(target=_read_lines, args=(process, lines), daemon=True)
        writer = threading.Thread(target=_write_job, args=(process, job), daemon=True)
        reader.start()
        writer.start()
        answered = 0
        current: int | None = None
        running: list[str] = []  # the input the worker is on (its last "input" event)
        deadline = time.monotonic() + options.timeout + 60.0  # the first target also waits for JAX to import
        try:
            while answered < len(targets):
                try:
                    line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    index = current if current is not None else answered
                    reason = f"timed out after {options.timeout:g} s (the worker was stopped)"
                    if running:
                        reason += "; it was running the input " + "; ".join(running)
                    yield worker.failed(targets[index], reason, False)
                    return index + 1
                if line is None:  # the worker exited
                    index = current if current is not None else answered
                    yield worker.failed(targets[index], f"the {worker.name} died" + _tail(stderr, process), False)
                    return index + 1
                event = json.loads(line)
                if event["event"] == "input":
                    running = event["lines"]
                elif event["event"] == "start":
                    current, running = event["index"], []
                    deadline = time.monotonic() + options.timeout
                    if on_start is not None:
                        on_start(targets[current])
                elif event["event"] == "report":
                    answered = event["index"] + 1
                    current = None
                    yield worker.parse(event["report"])
            return answered
        finally:
            _stop(process)


def _write_job(process: subprocess.Popen, job: str) -> None:
    try:
        process.stdin.write(job.encode("utf-8"))
        process.stdin.close()
    except (BrokenPipeError, OSError):
        pass


def _read_lines(process: subprocess.Popen, lines: queue.Queue) -> None:
    for raw in process.stdout:
        text = raw.decode("utf-8", errors="replace").strip()
        if text.startswith("{"):
            lines.put(text)
    lines.put(None)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            process.kill()
    process.wait()
    for stream in (process.stdin, process.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass


def _tail(stderr, process: subprocess.Popen) -> str:
    process.wait()
    stderr.flush()
    stderr.seek(0)
    lines = [line for line in stderr.read().decode("utf-8", errors="replace").splitlines() if line.strip()]
    code = process.returncode
    shown = " | ".join(lines[-STDERR_TAIL:])
    return f" (exit code {code})" + (f": {shown}" if shown else "")
