"""What the benchmarks measure, written once: time per call, compilations, and memory.

- `time_run(function, args, kwargs)`: seconds per call, waited for (the median of a batch), wall time or CPU
  time of the process.
- `CompileCounter`: counts XLA compilations while it is open (a jax.monitoring listener on the backend
  compile event: the same count as the lines `jax_log_compiles` prints, without parsing logs).
- `rss_mib()`, `peak_rss_mib()`: the process's resident memory now and at its peak (host memory: what a CPU
  device uses);
- `memory(compiled)`: a compiled function's `memory_analysis()` in MiB (arguments, outputs, outputs aliased to
  donated inputs, temporaries); `device_peak_mib()`: the device's peak memory where it reports one (GPU, TPU);
  None on CPU, whose `memory_stats()` is None.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
_MIB = 2**20


def time_run(
    function: Callable[..., Any], args, kwargs, *, min_time: float = 0.05, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Seconds per call, waited for: the median call of a batch of at least `min_time` seconds (and 5 calls).
    The median ignores the calls another process interrupted. `clock=time.process_time` gives the CPU seconds
    of the whole process per call (every thread: dispatch and XLA's own), which other processes on a shared
    machine disturb far less than wall time."""
    import jax

    times: list[float] = []
    begin = time.perf_counter()
    while len(times) < 5 or time.perf_counter() - begin < min_time:
        start = clock()
        jax.block_until_ready(function(*args, **kwargs))
        times.append(clock() - start)
    return statistics.median(times)


def first_and_later(call: Callable[[], Any], calls: int) -> tuple[float, float]:
    """(seconds of the first call, median seconds of `calls` later ones) of `call`, which must wait for its
    result: on a fresh function the first includes tracing and compiling, the later ones only running."""
    start = time.perf_counter()
    call()
    first = time.perf_counter() - start
    runs = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        runs.append(time.perf_counter() - start)
    return first, statistics.median(runs)


class CompileCounter:
    """`with CompileCounter() as counter: ...; counter.count`: the XLA compilations inside the block."""

    def __init__(self) -> None:
        self.count = 0

    def _listen(self, event: str, duration: float, **_: Any) -> None:
        if event == _COMPILE_EVENT:
            self.count += 1

    def __enter__(self) -> "CompileCounter":
        import jax

        jax.monitoring.register_event_duration_secs_listener(self._listen)
        return self

    def __exit__(self, *exc: object) -> None:
        import jax

        jax.monitoring.unregister_event_duration_listener(self._listen)


def memory(compiled: Any) -> dict[str, float]:
    """`compiled.memory_analysis()` in MiB; empty where the backend gives no analysis."""
    analysis = compiled.memory_analysis()
    if analysis is None:
        return {}
    return {
        "arguments_mib": analysis.argument_size_in_bytes / _MIB,
        "outputs_mib": analysis.output_size_in_bytes / _MIB,
        "aliased_mib": analysis.alias_size_in_bytes / _MIB,
        "temp_mib": analysis.temp_size_in_bytes / _MIB,
    }


def device_peak_mib() -> float | None:
    """Peak bytes in use on the first device since the process started, or None where the device does not
    report memory (CPU)."""
    import jax

    stats = jax.devices()[0].memory_stats()
    if not stats or "peak_bytes_in_use" not in stats:
        return None
    return stats["peak_bytes_in_use"] / _MIB


def rss_mib() -> float:
    """The process's resident memory now (Linux), in MiB."""
    import resource

    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / _MIB


def peak_rss_mib() -> float:
    """The process's peak resident memory so far, in MiB."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def mib(value: float | None) -> str:
    """A table cell: MiB to one decimal, or n/a."""
    return "n/a" if value is None else f"{value:.1f}"
