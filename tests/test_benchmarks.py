"""The loop benchmark harness runs end to end on a tiny case. Speed itself is measured in benchmarks/, never
asserted in tests: these only prove the harness works."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from jaxfix import corpus

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

BEFORE = """\
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def decay(x, n):
    for i in range(n):
        x = x * 0.5 + jnp.sin(x)
    return x
"""

AFTER = """\
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnums=1)
def decay(x, n):
    def body(i, x):
        x = x * 0.5 + jnp.sin(x)
        return x

    x = lax.fori_loop(0, n, body, x)
    return x
"""

IDIOM = """\
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def decay(x, n):
    return jax.lax.fori_loop(0, n, lambda i, x: x * 0.5 + jnp.sin(x), x)
"""


@pytest.fixture(scope="module")
def loops():
    spec = importlib.util.spec_from_file_location("jaxfix_benchmarks_loops", BENCHMARKS / "loops.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.fixture()
def tiny_corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "loop_tiny" / "decay"
    folder.mkdir(parents=True)
    (folder / "before.py").write_text(BEFORE)
    (folder / "after.py").write_text(AFTER)
    (folder / "idiom.py").write_text(IDIOM)
    (folder / "case.toml").write_text('entry = "decay"\nargs = ["jnp.linspace(0.0, 1.0, 8)", "3"]\nsize_arg = 1\n')
    return tmp_path


def test_bench_case_times_every_version(loops, tiny_corpus: Path) -> None:
    [case] = corpus.cases(tiny_corpus)
    result = loops.bench_case(case, repeats=1, size=4, min_time=0.0)
    assert result.size == 4
    assert [v.name for v in result.versions] == ["before", "after", "idiom"]
    for version in result.versions:
        assert version.error is None, version.error
        assert version.compile_s >= 0.0 and version.run_s > 0.0
    assert [v.same for v in result.versions[1:]] == ["yes", "yes"]
    table = loops.format_case(result)
    assert "### loop_tiny/decay (N = 4)" in table and "after.py (jaxfix rewrite)" in table
    assert "rewrite / idiom:" in table
    assert "loop_tiny/decay | 4 |" in loops.summary([result])


def test_a_failing_version_is_reported_not_fatal(loops, tiny_corpus: Path) -> None:
    (tiny_corpus / "loop_tiny" / "decay" / "idiom.py").write_text("def decay(x, n):\n    raise ValueError('nope')\n")
    [case] = corpus.cases(tiny_corpus)
    result = loops.bench_case(case, repeats=1, min_time=0.0)
    assert result.size == 3  # from the case's own args, through size_arg
    idiom = result.versions[-1]
    assert idiom.error == "ValueError: nope"
    assert "fails: ValueError: nope" in loops.format_case(result)


def test_main_selects_cases_by_glob(loops, tiny_corpus: Path, capsys) -> None:
    assert loops.main(["--root", str(tiny_corpus), "--cases", "loop_none*"]) == 1
    assert loops.main(["--root", str(tiny_corpus), "--cases", "loop_tiny/*", "--repeats", "1", "--min-time", "0"]) == 0
    out = capsys.readouterr().out
    assert "## Summary" in out and "| loop_tiny/decay | 3 |" in out


def test_grad_times_the_gradient_of_every_version(loops, tiny_corpus: Path) -> None:
    [case] = corpus.cases(tiny_corpus)
    result = loops.bench_case(case, repeats=1, size=4, min_time=0.0, grad=True)
    assert result.grad and result.title.endswith(", gradient")
    for version in result.versions:
        assert version.error is None, version.error
        assert version.output.shape == (8,)  # d loss / d x, x of the case's 8 values
    assert [v.same for v in result.versions[1:]] == ["yes", "yes"]
    assert "loop_tiny/decay (gradient) | 4 |" in loops.summary([result])


def test_measure_counts_compilations_and_reads_memory() -> None:
    import jax
    import jax.numpy as jnp

    sys.path.insert(0, str(BENCHMARKS))
    try:
        import measure
    finally:
        sys.path.remove(str(BENCHMARKS))
    step = jax.jit(lambda v: v * 2.0 + 1.0)
    x = jnp.arange(4.0)
    with measure.CompileCounter() as first:
        step(x).block_until_ready()
    with measure.CompileCounter() as cached:
        step(x).block_until_ready()
    assert (first.count, cached.count) == (1, 0)
    analysis = measure.memory(step.lower(x).compile())
    assert analysis["arguments_mib"] == analysis["outputs_mib"] == 16 / 2**20
    peak = measure.device_peak_mib()
    stats = jax.devices()[0].memory_stats()
    assert (peak is None) == (not stats or "peak_bytes_in_use" not in stats)
    assert measure.time_run(step, (x,), {}, min_time=0.0) > 0
