"""The engine's worker processes (jaxfix/workers.py): results in order, each item handed where possible to the
worker that ran the item of the same key before (it keeps that file's tree), and no worker idle while another
has work; and the trees kept between the index and the check (jaxfix/parsed.py)."""

from __future__ import annotations

import ast
from concurrent.futures import Future

import pytest

from jaxfix import parsed, workers


def _square(value: int) -> int:
    return value * value


def test_results_come_in_the_order_of_the_items_in_real_workers() -> None:
    items = list(range(40))
    with workers.Workers(2) as pool:
        first = list(pool.map(_square, items, keys=[f"k{i}" for i in items]))
        again = list(pool.map(_square, items[::-1], small_chunks=True, keys=[f"k{i}" for i in items[::-1]]))
        unkeyed = list(pool.map(_square, items))
    assert first == unkeyed == [i * i for i in items]
    assert again == [i * i for i in items[::-1]]


def test_a_map_of_few_items_runs_in_this_process_lazily() -> None:
    with workers.Workers(2) as pool:
        result = pool.map(_square, [1, 2, 3])
        assert not isinstance(result, list) and not pool._lanes
        assert list(result) == [1, 4, 9]


class _FakeLane:
    """A worker that runs nothing until the test completes what was submitted to it."""

    made: list["_FakeLane"] = []

    def __init__(self, max_workers, mp_context, initializer) -> None:
        self.submitted: list[tuple[list, Future]] = []
        _FakeLane.made.append(self)

    def submit(self, function, chunk_function, items) -> Future:
        future: Future = Future()
        self.submitted.append((items, future))
        return future

    def complete_all(self) -> None:
        for items, future in list(self.submitted):
            if not future.done():
                future.set_result([f"{item}!" for item in items])

    def shutdown(self, cancel_futures: bool) -> None:
        pass


@pytest.fixture()
def fake_lanes(monkeypatch):
    _FakeLane.made = []
    monkeypatch.setattr(workers, "ProcessPoolExecutor", _FakeLane)
    return _FakeLane.made


def _run_until_done(lanes: list[_FakeLane], results) -> list:
    while True:
        pending = [f for lane in lanes for _, f in lane.submitted if not f.done()]
        if not pending:
            return list(results)
        for lane in lanes:
            lane.complete_all()


def test_each_item_goes_back_to_the_worker_that_ran_its_key(fake_lanes) -> None:
    keys = [f"file{i}.py" for i in range(32)]
    pool = workers.Workers(2)
    assert _run_until_done(fake_lanes, pool.map(str, keys, keys=keys)) == [f"{k}!" for k in keys]
    ran_on = {item: lane for lane, fake in enumerate(fake_lanes) for items, _ in fake.submitted for item in items}
    assert set(ran_on.values()) == {0, 1}
    for fake in fake_lanes:
        fake.submitted.clear()
    # the second map hands each lane its own items first, IN_FLIGHT chunks of them at once
    second = pool.map(str, keys, small_chunks=True, keys=keys)
    for lane, fake in enumerate(fake_lanes):
        assert len(fake.submitted) == workers.IN_FLIGHT
        assert all(ran_on[item] == lane for items, _ in fake.submitted for item in items)
    assert _run_until_done(fake_lanes, second) == [f"{k}!" for k in keys]
    assert all(ran_on[item] == lane for lane, fake in enumerate(fake_lanes) for items, _ in fake.submitted for item in items)


def test_a_worker_with_nothing_of_its_own_takes_the_last_of_another(fake_lanes) -> None:
    keys = [f"file{i}.py" for i in range(32)]
    pool = workers.Workers(2)
    _run_until_done(fake_lanes, pool.map(str, keys, keys=keys))
    ran_on = {item: lane for lane, fake in enumerate(fake_lanes) for items, _ in fake.submitted for item in items}
    for fake in fake_lanes:
        fake.submitted.clear()
    mine = [k for k in keys if ran_on[k] == 0]
    others = [k for k in keys if ran_on[k] == 1]
    result = pool.map(str, mine + others, small_chunks=True, keys=mine + others)
    fast = fake_lanes[0]
    taken: list[str] = []
    for _ in range(len(keys)):
        fast.complete_all()  # lane 0 works through its own items, lane 1 does nothing
        taken = [item for items, _ in fast.submitted for item in items if ran_on[item] == 1]
        if taken:
            break
    assert taken and taken[0] == others[-1]  # the last of the other's queue (the smallest file)
    assert _run_until_done(fake_lanes, result) == [f"{k}!" for k in mine + others]


def test_a_kept_tree_is_taken_once_and_within_the_budget(monkeypatch) -> None:
    parsed.forget()
    monkeypatch.setattr(parsed, "BUDGET", 20)
    small, big = b"x = 1\n", b"y = [1, 2, 3, 4, 5]\n"
    parsed.keep(small, parsed.parse(small))
    parsed.keep(big, parsed.parse(big))  # 6 + 20 bytes: over the budget, not kept
    taken = parsed.take(small)
    assert ast.dump(taken) == ast.dump(ast.parse(small))
    assert parsed.take(small) is None and parsed.take(big) is None
    parsed.keep(big, parsed.parse(big))  # room for it once the other is taken
    assert parsed.take(big) is not None
    parsed.forget()


def test_a_kept_notebook_is_taken_once_and_within_the_budget(monkeypatch) -> None:
    parsed.forget()
    monkeypatch.setattr(parsed, "NOTEBOOK_BUDGET", 10)
    small, big, book = b"{}", b'{"cells": []}', object()
    parsed.keep_notebook(small, book)
    parsed.keep_notebook(big, book)  # 2 + 13 bytes: over the budget, not kept
    assert parsed.take_notebook(small) is book and parsed.take_notebook(small) is None
    assert parsed.take_notebook(big) is None
    parsed.keep_notebook(small, book)
    parsed.forget()
    assert parsed.take_notebook(small) is None


def test_parse_is_the_compilers_parse_without_warnings(recwarn) -> None:
    source = "if x is 1:\n    pass\n"
    assert ast.dump(parsed.parse(source)) == ast.dump(ast.parse(source))
    assert not [w for w in recwarn if issubclass(w.category, SyntaxWarning)]
    with pytest.raises(SyntaxError):
        parsed.parse("def f(:\n")


def test_a_modules_summary_leaves_no_cyclic_garbage() -> None:
    """What the index leaves in a worker is frozen (workers.collections_deferred with long_lived), never
    collected: summarising a Python module must leave no cycle behind, or the worker would keep it to the end."""
    import gc
    from pathlib import Path

    from jaxfix.project_io import _marshalled_summary

    root = Path(__file__).resolve().parent.parent
    sources = sorted(root.glob("corpus/*/*/*.py")) + sorted(root.glob("examples/**/*.py")) + sorted(root.glob("jaxfix/**/*.py"))
    assert len(sources) > 100
    gc.collect()
    gc.disable()
    try:
        for source in sources:
            assert _marshalled_summary((source.read_bytes(), "pkg.module", source.name == "__init__.py", False)) is not None
        assert gc.collect() == 0
    finally:
        gc.enable()
        parsed.forget()


def test_summaries_go_before_any_check(fake_lanes) -> None:
    """Items of no worker (the index's summaries) are handed out before a worker's own (its checks): a worker
    makes every summary before its first check, so that what is frozen after a summary holds no check's garbage."""
    keys = [f"file{i}.py" for i in range(32)]
    pool = workers.Workers(2)
    _run_until_done(fake_lanes, pool.map(str, keys, keys=keys))
    for fake in fake_lanes:
        fake.submitted.clear()
    checks = pool.map(str, keys, small_chunks=True, keys=keys)  # every lane busy with its own now
    summaries = pool.map(str, [f"other{i}.py" for i in range(16)], keys=[f"other{i}.py" for i in range(16)])
    lane = fake_lanes[0]
    lane.submitted[0][1].set_result([f"{item}!" for item in lane.submitted[0][0]])  # one check done: the next is...
    assert lane.submitted[-1][0][0].startswith("other")  # ...a summary, though its own checks wait
    assert _run_until_done(fake_lanes, checks) == [f"{k}!" for k in keys]
    assert _run_until_done(fake_lanes, summaries) == [f"other{i}.py!" for i in range(16)]


_GC_PROBE = """
import gc, sys, weakref
from jaxfix import workers

class Node:
    pass

def cycle():
    a, b = Node(), Node()
    a.b, b.a = b, a
    return weakref.ref(a)

gc.collect()
before = gc.get_threshold()
workers.tune_gc()
with workers.collections_deferred():
    left = cycle()
junk = [[] for _ in range(50_000)]  # young objects, far below GARBAGE_BUDGET
deferred = left() is not None
with workers.collections_deferred(long_lived=True):
    kept = [Node() for _ in range(10)]
frozen_after = gc.get_freeze_count()
with workers.collections_deferred():
    last = cycle()
workers.leave_garbage()
print(deferred, left() is None, last() is not None, gc.get_freeze_count() > frozen_after)
workers.untune_gc()
print(gc.get_threshold() == before)
"""


def test_a_tuned_process_defers_collections_and_freezes_no_garbage() -> None:
    """In a process that only runs jaxfix (tune_gc), a file's cyclic garbage waits for GARBAGE_BUDGET new objects
    rather than being collected after each file; a long-lived block (a summary) first collects what an earlier
    block left, so that freezing its results freezes no garbage; at the end the garbage left is frozen for the
    exit (leave_garbage), and untune_gc gives a lasting process (the language server) Python's thresholds back."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _GC_PROBE], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["True", "True", "True", "True", "True"], run.stdout + run.stderr
