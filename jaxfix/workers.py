"""The worker processes of one run, with affinity. A run maps twice over the same files: the project index's
summaries, then the checks. Each worker keeps the trees it parsed for the summaries (parsed.py), so a file is
checked, where it can be, by the worker that summarised it; a worker with none of its own files left takes
another's (the last, the smallest: the queues are handed out biggest first) and parses it again, so that no
worker idles while another has work."""

from __future__ import annotations

import gc
import multiprocessing
import sys
import threading
from collections import deque
from contextlib import contextmanager
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Callable, Hashable, Iterator, Sequence

from jaxfix import parsed

PARALLEL_THRESHOLD = 8  # fewer files than this run in-process: a worker pool costs more than it saves
IN_FLIGHT = 2  # chunks handed to a worker at once, so that it never waits for the next
GARBAGE_BUDGET = 1_000_000  # new objects tracked by the collector before a young collection, in a tuned process


def tune_gc() -> None:
    """For a process that only runs jaxfix (a worker, the command line): what is imported by now lives as long as
    the process, so the collector stops scanning it (`gc.freeze`), and young collections wait for GARBAGE_BUDGET
    new objects (Python's default: 700). Each file's trees are garbage once it is done; scanning them over and
    over while they are built cost ~12% of a cold check's CPU (782 real files: 26.4 s -> 23.1 s), and collecting
    them after each file 1.5 s of the 17 s of CPU of a cold check of 1,449 real files on two workers, most of it
    freeing them, which a worker can leave to its end: it exits without freeing anything (os._exit). The garbage
    of the files a process checks between two collections then costs it memory: about 120 MB more for a worker
    there (590 MB at most, from 470 MB); a bigger project collects every GARBAGE_BUDGET objects."""
    global _tuned, _untuned
    _untuned = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(GARBAGE_BUDGET, 10, 10)
    _tuned = True


def untune_gc() -> None:
    """For a process that lives on (the language server): the summaries it makes are replaced as files change,
    so none may be frozen, and its garbage is collected at Python's pace (what the command line's tune_gc did is
    undone; what it froze, the imported modules, stays frozen)."""
    global _tuned
    if _tuned:
        gc.set_threshold(*_untuned)
        _tuned = False


def leave_garbage() -> None:
    """At the end of a run in a process tune_gc tuned: the interpreter's exit collects what no collection did yet
    (a check's garbage, below GARBAGE_BUDGET), only to free it; frozen, it is left to the process's end."""
    if _tuned:
        gc.freeze()


_tuned = False  # this process only runs jaxfix (tune_gc)
_untuned = gc.get_threshold()  # the collector's thresholds before tune_gc
_garbage_left = False  # a block that is not long-lived ended since the last freeze (tuned process)


@contextmanager
def collections_deferred(*, long_lived: bool = False) -> Iterator[None]:
    """No cyclic garbage collection within the block; what it left is collected with the next young collection
    (in a tuned process, once GARBAGE_BUDGET objects have piled up). A file's check builds millions of objects
    that live until it is done (its LibCST tree, the analyses), which young collections otherwise scan and
    promote over and over. Summaries are acyclic and the project's solution holds few cycles: collections during
    them find little.

    `long_lived`: what the block made lives to the end of the run (the index's summaries, the trees kept for the
    checks: acyclic, a few hundred MB): in a process that only runs jaxfix (tune_gc), everything alive after it
    is frozen, never scanned again. Scanning them cost 1.8 s of a 15 s cold check of 1,401 real files (one
    process), and deferring each file's collections 1 s more. What an earlier block left is collected first,
    so that no garbage is frozen (a worker makes every summary before its first check, `_next_for`: only a
    notebook's summary leaves some then)."""
    global _garbage_left
    if long_lived and _tuned and _garbage_left:
        gc.collect()
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _tuned:
            if long_lived:
                gc.freeze()
            _garbage_left = not long_lived
        if collecting:
            gc.enable()


class _Chunk:
    """Items of one map handed to one worker together, as one job; `done` is resolved with their results."""

    def __init__(self, function: Callable, items: list, keys: list) -> None:
        self.function = function
        self.items = items
        self.keys = keys
        self.done: Future = Future()


class Workers:
    """Worker processes for one run, started on first need and shared by its maps. A map of one job or a few
    items runs in this process, so that a warm run starts no worker at all."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self._lanes: list[ProcessPoolExecutor] = []  # one single-process executor per worker
        self._own: list[deque[_Chunk]] = []  # per worker, the chunks of items it holds the trees of
        self._shared: deque[_Chunk] = deque()  # chunks any worker may take
        self._running: list[int] = []
        self._holder: dict[Hashable, int] = {}  # key of an item → the worker that ran it
        self._lock = threading.RLock()

    def parallel(self, count: int) -> bool:
        """Whether a map of `count` items runs in the workers (else in this process, lazily)."""
        return self.jobs > 1 and count >= PARALLEL_THRESHOLD

    def map(self, function: Callable, items: Sequence, *, small_chunks: bool = False,
            keys: Sequence[Hashable] | None = None) -> Iterator:
        """`function` over `items`, results in order. `small_chunks` where a few items cost most of the time.
        `keys`: what identifies each item across maps (its path); an item goes, where it can, to the worker
        that ran the item of the same key in an earlier map."""
        items = list(items)
        if not self.parallel(len(items)):
            return map(function, items)
        keys = list(keys) if keys is not None else [None] * len(items)
        self._start()
        size = max(1, len(items) // (self.jobs * (32 if small_chunks else 4)))
        by_lane: list[list[int]] = [[] for _ in self._lanes]
        anywhere: list[int] = []
        for index, key in enumerate(keys):
            lane = self._holder.get(key) if key is not None else None
            (by_lane[lane] if lane is not None else anywhere).append(index)
        chunk_of: list[tuple[_Chunk, int]] = [None] * len(items)  # type: ignore[list-item]
        with self._lock:
            for queue, indices in [*zip(self._own, by_lane), (self._shared, anywhere)]:
                for start in range(0, len(indices), size):
                    part = indices[start:start + size]
                    chunk = _Chunk(function, [items[i] for i in part], [keys[i] for i in part])
                    for position, index in enumerate(part):
                        chunk_of[index] = (chunk, position)
                    queue.append(chunk)
            for lane in range(len(self._lanes)):
                self._feed(lane)
        return (chunk.done.result()[position] for chunk, position in chunk_of)

    def _start(self) -> None:
        if self._lanes:
            return
        context = _context()
        for _ in range(self.jobs):
            self._lanes.append(ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=tune_gc))
            self._own.append(deque())
            self._running.append(0)

    def _feed(self, lane: int) -> None:
        """Hand `lane` chunks up to IN_FLIGHT: any worker's first, then its own, then the last of the longest
        queue of another's."""
        with self._lock:
            while self._running[lane] < IN_FLIGHT:
                chunk = self._next_for(lane)
                if chunk is None:
                    return
                for key in chunk.keys:
                    if key is not None:
                        self._holder[key] = lane
                self._running[lane] += 1
                try:
                    future = self._lanes[lane].submit(_run_chunk, chunk.function, chunk.items)
                except Exception as error:  # noqa: BLE001  (a broken or shut-down pool: the map's reader sees it)
                    self._running[lane] -= 1
                    chunk.done.set_exception(error)
                    continue
                future.add_done_callback(lambda f, lane=lane, chunk=chunk: self._finished(lane, chunk, f))

    def _next_for(self, lane: int) -> _Chunk | None:
        # shared chunks first: the index's summaries, which every project's facts wait for (and which a worker
        # makes before its first check, so that freezing them freezes no check's garbage: collections_deferred)
        if self._shared:
            return self._shared.popleft()
        if self._own[lane]:
            return self._own[lane].popleft()
        longest = max(range(len(self._own)), key=lambda other: len(self._own[other]))
        return self._own[longest].pop() if self._own[longest] else None

    def _finished(self, lane: int, chunk: _Chunk, future: Future) -> None:
        if future.cancelled():
            chunk.done.cancel()
        elif future.exception() is not None:
            chunk.done.set_exception(future.exception())
        else:
            chunk.done.set_result(future.result())
        with self._lock:
            self._running[lane] -= 1
            self._feed(lane)

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:
            for queue in [*self._own, self._shared]:
                queue.clear()
        for lane in self._lanes:
            lane.shutdown(cancel_futures=True)
        parsed.forget()  # what this process kept for a check that did not come


def _run_chunk(function: Callable, items: list) -> list:
    return [function(item) for item in items]


def _context():
    """How to start the workers. Fork only from a single-threaded process (the command line): it starts workers
    with everything imported, at once. A process that has imported JAX (the tests, an editor's server) is
    multithreaded, and forking it can deadlock; forkserver forks from a clean single-threaded server instead,
    which imports the engine once (preload) so that each worker starts with it imported (~0.5 s more per run).
    Decided once per run, before the first worker's executor starts its thread."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1 and "jax" not in sys.modules:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["jaxfix.engine", "jaxfix.registry"])
        return context
    return multiprocessing.get_context("spawn")
