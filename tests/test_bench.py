"""`jaxfix bench`: the numbers it reports, their ratios, fresh function objects, modes, sizes and bad input. No
timed assertion: a comparison of times is only made where one side does a thousand times the other's work."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jaxfix import corpus
from jaxfix.bench import report, sizes
from jaxfix.cli import app
from jaxfix.verify.targets import Module, Source, Target

CORPUS = corpus.ROOT
SIDE_KEYS = {"compile_s", "run_s", "compiles", "temp_bytes"}

BEFORE = '''import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    return x * 2.0


def rows(xs):
    return jnp.stack([jnp.sum(r * r) for r in xs])


@jax.jit
def newton(a):
    x = jnp.maximum(a, 1.0)
    while jnp.max(jnp.abs(x * x - a)) > 1e-4:
        x = 0.5 * (x + a / x)
    return x


def tiled(xs, n):
    return jnp.stack([jnp.tile(r, n) for r in xs])


def signs(xs):
    if float(jnp.sum(xs)) > 0:
        return jnp.stack([r * 2.0 for r in xs])
    return xs


if __name__ == "__main__":
    step(jnp.ones(64))
    rows(jnp.ones((8, 3)))
    newton(jnp.array([2.0, 9.0]))
    tiled(jnp.ones((8, 3)), 2)
    signs(jnp.ones((8, 3)))
'''

# `step` is made a thousand times slower: 2000 steps of a 64x64 matmul against one multiplication
AFTER = '''import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def step(x):
    m = jnp.eye(64) * 0.5
    return lax.fori_loop(0, 2000, lambda i, y: jnp.sin(y @ m), x)


def rows(xs):
    return jax.vmap(lambda r: jnp.sum(r * r))(xs)


@jax.jit
def newton(a):
    x = jnp.maximum(a, 1.0)
    return lax.while_loop(lambda x: jnp.max(jnp.abs(x * x - a)) > 1e-4, lambda x: 0.5 * (x + a / x), x)


def tiled(xs, n):  # under jax.jit, n must be static (a shape)
    return jax.vmap(lambda r: jnp.tile(r, n))(xs)


def signs(xs):  # a Python branch on a value: runs eagerly, cannot be jitted
    if float(jnp.sum(xs)) > 0:
        return jax.vmap(lambda r: r * 2.0)(xs)
    return xs
'''


def run(*args: str, cwd: Path):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, list(args))
    finally:
        os.chdir(old)


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("bench")
    (folder / "before.py").write_text(BEFORE)
    (folder / "after.py").write_text(AFTER)
    return folder


@pytest.fixture(scope="module")
def measured(pair: Path) -> dict[str, dict]:
    result = run("bench", "before.py", "after.py", "--format", "json", "--repeats", "2", "--warmup", "0", cwd=pair)
    assert result.exit_code == 0, result.output
    return {row["function"]: row for row in json.loads(result.stdout)}


ROW_KEYS = {"function", "path", "target", "device", "device_kind", "mode", "input", "origin", "before", "after", "ratios"}


def test_json_shape_and_ratios(measured: dict[str, dict]) -> None:
    assert set(measured) == {"step", "rows", "newton", "tiled", "signs"}
    for row in measured.values():
        assert set(row) == ROW_KEYS, "without --jit-rewrite a row has no after_jit side"
        assert row["device"] == "cpu"
        for side in ("before", "after"):
            assert SIDE_KEYS <= set(row[side]), row[side]
            assert row[side]["error"] is None, row[side]
            assert row[side]["calls"] == 1 + 0 + 2
        for name, key in report.RATIOS.items():
            wanted = report.ratio(row["before"][key], row["after"][key])
            assert row["ratios"][name] == (None if wanted is None else pytest.approx(wanted, rel=1e-3)), (name, row)


def test_a_fresh_function_object_compiles_again(measured: dict[str, dict]) -> None:
    """The jitted `step` was warmed up and compiled ahead of time before its first timed call, on other copies:
    that call still compiles, since every measurement executes the module again."""
    row = measured["step"]
    assert row["mode"] == "jit"
    for side in ("before", "after"):
        assert row[side]["jitted"] and row[side]["compile_how"] == "lower+compile"
        assert row[side]["first_compiles"] >= 1 and row[side]["compiles"] >= 1
        assert row[side]["compile_s"] > 0 and row[side]["temp_bytes"] is not None
    assert row["after"]["compiles"] == row["after"]["first_compiles"], "steady calls do not recompile"


def test_a_slower_rewrite_shows_a_ratio_below_1(measured: dict[str, dict]) -> None:
    row = measured["step"]
    assert row["ratios"]["run"] < 1
    assert row["ratios"]["run"] == pytest.approx(row["before"]["run_s"] / row["after"]["run_s"], rel=1e-3)


def test_eager_original_is_measured_eagerly(measured: dict[str, dict]) -> None:
    row = measured["rows"]
    assert row["mode"] == "eager"
    for side in ("before", "after"):
        assert not row[side]["jitted"] and row[side]["compile_how"] == "first call - run"
        assert row[side]["temp_bytes"] is None and row[side]["run_s"] > 0


def test_original_rejected_under_jit_runs_with_jit_disabled(measured: dict[str, dict]) -> None:
    row = measured["newton"]
    assert row["mode"] == "eager: the original fails under jit"
    assert row["before"]["eager"] and "TracerBoolConversionError" in row["before"]["rejected"]
    assert row["after"]["jitted"] and row["after"]["first_compiles"] >= 1


# ---- --jit-rewrite ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def measured_jit(pair: Path) -> dict[str, dict]:
    names = [arg for name in ("rows", "tiled", "signs", "step") for arg in ("--function", name)]
    result = run("bench", "before.py", "after.py", "--format", "json", "--repeats", "3", "--jit-rewrite", *names, cwd=pair)
    assert result.exit_code == 0, result.output
    return {row["function"]: row for row in json.loads(result.stdout)}


def test_jit_rewrite_measures_the_rewrite_jitted_once(measured_jit: dict[str, dict]) -> None:
    """The eager original against `jax.jit(rewrite)`: one compilation over all its calls (a fresh jit per call,
    or the rewrite run eagerly, would not give 1), an executable with memory, and the original left eager."""
    row = measured_jit["rows"]
    assert set(row) == ROW_KEYS | {"after_jit", "ratios_jit"}
    jitted, after, before = row["after_jit"], row["after"], row["before"]
    assert row["mode"] == "eager" and not before["jitted"] and before["compile_how"] == "first call - run"
    assert not after["jitted"] and after["temp_bytes"] is None, "`after` is still the rewrite run eagerly"
    assert jitted["run_as"] == "jax.jit(rows)" and jitted["jitted"] and not jitted["eager"]
    assert jitted["compile_how"] == "lower+compile" and jitted["compile_s"] > 0 and jitted["temp_bytes"] is not None
    assert jitted["calls"] == 1 + 1 + 3 and jitted["first_compiles"] == 1 and jitted["compiles"] == 1
    assert jitted["error"] is None and jitted["run_s"] > 0
    assert row["ratios_jit"]["run"] == pytest.approx(before["run_s"] / jitted["run_s"], rel=1e-3)
    assert row["ratios"]["run"] == pytest.approx(before["run_s"] / after["run_s"], rel=1e-3)


def test_jit_rewrite_marks_python_ints_static(measured_jit: dict[str, dict]) -> None:
    jitted = measured_jit["tiled"]["after_jit"]
    assert jitted["run_as"] == "jax.jit(tiled, static_argnums=(1,))"
    assert jitted["error"] is None and jitted["compiles"] == 1


def test_jit_rewrite_says_when_the_rewrite_cannot_be_jitted(measured_jit: dict[str, dict]) -> None:
    row = measured_jit["signs"]
    assert row["after"]["error"] is None and row["after"]["run_s"] > 0, "eagerly it runs"
    jitted = row["after_jit"]
    assert jitted["error"].startswith("cannot be jitted: ConcretizationTypeError"), jitted["error"]
    assert jitted["run_s"] is None and jitted["compile_s"] is None and jitted["compiles"] is None
    assert row["ratios_jit"] is None


def test_jit_rewrite_leaves_a_jitted_rewrite_as_it_is(measured_jit: dict[str, dict]) -> None:
    row = measured_jit["step"]
    assert row["after"]["jitted"] and row["after_jit"] is None and row["ratios_jit"] is None


def test_jit_rewrite_text_table(pair: Path) -> None:
    args = ["--function", "rows", "--function", "signs", "--repeats", "1", "--warmup", "0", "--jit-rewrite"]
    result = run("bench", "before.py", "after.py", *args, cwd=pair)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("before.py::rows"))
    assert " eager " in lines[at]
    assert lines[at + 1].startswith("  ↳ jax.jit(rows)") and " jit " in lines[at + 1] and "0 -> 1" in lines[at + 1]
    failed = next(line for line in lines if line.startswith("  ↳ jax.jit(signs)"))
    assert "-> error" in failed and "x)" not in failed, "no number for a rewrite that cannot be jitted"
    assert any(line.startswith("before.py::signs (cpu): the rewrite under jax.jit: cannot be jitted") for line in lines)
    assert "↳ lines: the original against the rewrite called under jax.jit" in lines[-1]


def test_jit_call_static_arguments() -> None:
    import jax.numpy as jnp

    from jaxfix.bench import measure
    from jaxfix.verify.strategies import Call

    found = measure.jit_call(Call((jnp.ones(3), 300, (6, 2), 0.5, None, True, [1, 2]), {"n": 4, "rate": 0.1, "name": "a"}))
    assert found.argnums == (1, 2, 4, 5) and found.argnames == ("n", "name")
    assert found.describe("f") == "jax.jit(f, static_argnums=(1, 2, 4, 5), static_argnames=('n', 'name'))"
    assert measure.jit_call(Call((jnp.ones(3),), {})).describe("g") == "jax.jit(g)"


def test_text_table(pair: Path) -> None:
    result = run("bench", "before.py", "after.py", "--function", "step", "--repeats", "1", "--warmup", "0", cwd=pair)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["function", "device", "mode", "compile", "run", "compiles", "temp", "memory"]
    assert lines[1].startswith("before.py::step") and " cpu " in lines[1] and " -> " in lines[1]
    assert lines[-1].startswith("Measured 1 function on cpu; ratios are original / rewrite")
    assert "\r" not in result.output, "no progress bar when stderr is not a terminal"


def test_pending_rewrites_hoisted_jit_compiles_once_per_call(tmp_path: Path) -> None:
    """`jaxfix bench PATH`: the rewrite is computed in memory (nothing written); the jit hoisted out of the loop
    brings one call's compilations from one per iteration to one."""
    shutil.copytree(CORPUS / "jit_in_loop" / "inline_lambda", tmp_path / "case")
    (tmp_path / "case" / "after.py").unlink()
    text = (tmp_path / "case" / "before.py").read_text()
    result = run("bench", "case", "--format", "json", "--repeats", "1", "--warmup", "0", "-q", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    assert row["function"] == "smooth" and row["origin"] == "case.toml"
    assert row["before"]["first_compiles"] > 1 and row["after"]["first_compiles"] == 1
    assert (tmp_path / "case" / "before.py").read_text() == text


@pytest.mark.parametrize(
    "args, message",
    [
        (["a.py", "b.py"], "define no function in common"),
        (["a.py", "a.py", "--function", "g"], "defines no function 'g'"),
        (["a.py", "missing.py"], "missing.py"),
        (["a.py", "a.py", "--format", "xml"], "--format must be text or json"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "a.py").write_text("def f(x):\n    return x\n")
    (tmp_path / "b.py").write_text("def h(x):\n    return x\n")
    result = run("bench", *args, cwd=tmp_path)
    assert result.exit_code == 2
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_nothing_measurable_exits_2(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f(x):\n    return x\n")
    result = run("bench", "a.py", "a.py", cwd=tmp_path)
    assert result.exit_code == 2
    assert "a.py::f: not measured: no source of inputs" in result.output


# ---- parts ------------------------------------------------------------------------------------------------


def test_ratio() -> None:
    assert report.ratio(4.0, 2.0) == 2.0
    assert report.ratio(1.0, 4.0) == 0.25
    assert report.ratio(0, 0) == 1.0
    assert report.ratio(3, 0) is None and report.ratio(None, 1.0) is None


def _case_target(case: str, args: list[str], kwargs: dict[str, str]) -> Target:
    folder = CORPUS / case
    module = Module(str(folder / "before.py"), "", "")
    spec = corpus.Case(*case.split("/"), folder, sizes.case_spec(str(folder / "before.py")))
    source = Source(kind="examples", origin="case.toml", calls=({"args": args, "kwargs": kwargs},))
    return Target(id="t", name=spec.spec["entry"], before=module, after=module, sources=(source,))


def test_resize_sets_trip_count_and_tiles_batches() -> None:
    import jax.numpy as jnp

    target = _case_target("loop_to_fori/static_steps_decay", ["jnp.ones(3)", "300"], {})
    resized, what = sizes.resize(target, 17, None)
    assert resized.sources[0].calls[0]["args"] == ["jnp.ones(3)", "17"] and what == ["steps=17"]

    target = _case_target("loop_to_fori/rng_fold_in", ["jax.random.key(0)", "jnp.zeros(3)"], {"steps": "64"})
    assert sizes.resize(target, 300, None)[0].sources[0].calls[0]["kwargs"] == {"steps": "300"}

    target = _case_target("batch_loop_to_vmap/zip_pairs", ["jnp.arange(12.0).reshape(4, 3)", "jnp.ones((4, 3))"], {})
    resized, what = sizes.resize(target, 300, 10)
    assert what == ["batch=10"], "no size_arg: the trip count is left alone"
    tiled = [eval(expr, {"jnp": jnp}) for expr in resized.sources[0].calls[0]["args"]]
    assert [t.shape for t in tiled] == [(10, 3), (10, 3)]
    assert jnp.array_equal(tiled[0][4:8], jnp.arange(12.0).reshape(4, 3)), "rows repeat in order"
    assert sizes.resize(target, None, None) == (target, [])


def test_progress_bar_only_on_a_terminal() -> None:
    """bench's bar (jaxfix/report/progress.py, as cli.bench makes it): the function being measured and the seconds
    since the start, drawn at once; nothing into a pipe or when disabled (--quiet)."""
    import re

    from jaxfix.report.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    def bar(total: int, stream: io.StringIO, enabled: bool = True) -> Progress:
        return Progress(total, enabled=enabled, stream=stream, label="functions", items=True, delay=0)

    quiet = io.StringIO()
    shown = bar(2, quiet)
    shown.start("a")
    shown.finish_one()
    assert quiet.getvalue() == ""
    stream = Terminal()
    shown = bar(2, stream)
    shown.start("before.py::f")
    assert re.fullmatch(r"\r\x1b\[K\[-{30}\] 0/2 functions: before\.py::f  \d+ s", stream.getvalue()), stream.getvalue()
    shown.finish_one()
    shown.start("before.py::g")
    shown.close()
    drawn = stream.getvalue().split("\r\x1b[K")
    assert re.fullmatch(r"\[#{15}-{15}\] 1/2 functions: before\.py::g  \d+ s", drawn[-2]), drawn
    assert drawn[-1] == "", "close erases the bar"
    single = Terminal()
    bar(1, single).start("a.py::only")
    assert "0/1 functions: a.py::only" in single.getvalue(), "one long function is worth a bar that names it"
    silenced = Terminal()
    bar(2, silenced, enabled=False).start("a")
    assert silenced.getvalue() == ""


def test_bench_corpus_writes_the_docs_table(tmp_path: Path) -> None:
    """benchmarks/bench_corpus.py end to end on one case: the table per codemod and the targets."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_corpus.py"
    spec = importlib.util.spec_from_file_location("bench_corpus_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "benchmarks.md"
    module.main(["--cases", "jit_in_loop/inline_lambda", "--repeats", "1", "--out", str(out)])
    text = out.read_text()
    assert "- JAX " in text and "cores" in text and "No GPU was available" in text
    assert "## JF502 `jit_in_loop`" in text
    row = next(line for line in text.splitlines() if line.startswith("| `inline_lambda`"))
    assert "| eager |" in row and "float32[8]" in row
    assert "`jit_in_loop/inline_lambda`: compilations in one call 10 -> 1: meets N -> 1" in text


def _bench_corpus_module(name: str):
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_corpus.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_corpus_writes_a_table_per_device() -> None:
    """Rows from a GPU and the CPU (as on a machine with a GPU): one table per device, each named, and the GPU
    named in the header; CPU rows alone keep one table and say that no GPU was lent."""
    from types import SimpleNamespace

    module = _bench_corpus_module("bench_corpus_devices")
    side = {"compile_s": 1.0, "run_s": 0.5, "compiles": 1, "temp_bytes": 0, "first_compiles": 1, "calls": 3, "error": None}
    case = SimpleNamespace(name="case_a", id="mod/case_a", codemod="mod")

    def row(device: str, kind: str) -> dict:
        return {"target": "t", "device": device, "device_kind": kind, "mode": "jit", "input": "float32[3]", "before": side, "after": side}

    rows = [row("gpu", "NVIDIA H100"), row("cpu", "cpu")]
    lines = module.table(rows, {"t": case}, {"t": []})
    assert [line for line in lines if line.startswith("###")] == ["### On gpu (NVIDIA H100)", "### On cpu"]
    assert sum(line.startswith("| `case_a` | jit |") for line in lines) == 2
    assert module.devices_line({"platforms": ["cpu", "gpu"]}, rows) == "- Devices measured: gpu (NVIDIA H100), cpu: one table per codemod and device."
    assert not any(line.startswith("###") for line in module.table(rows[1:], {"t": case}, {"t": []}))
    assert module.devices_line({"platforms": ["cpu"]}, rows[1:]).startswith("- No GPU was available to this run")


def test_bench_corpus_judges_eager_batches_against_the_jitted_rewrite(tmp_path: Path) -> None:
    """An eager JF301 case: both comparisons in the table, the target judged on the jitted rewrite's."""
    module = _bench_corpus_module("bench_corpus_under_test_jf301")
    out = tmp_path / "benchmarks.md"
    module.main(["--cases", "batch_loop_to_vmap/list_map", "--batch", "64", "--repeats", "2", "--out", str(out)])
    lines = out.read_text().splitlines()
    assert any("judged on the eager loop against the rewrite called under `jax.jit`" in line for line in lines)
    at = next(i for i, line in enumerate(lines) if line.startswith("| `list_map` (batch=64) | eager |"))
    jitted = lines[at + 1]
    assert jitted.startswith("| ↳ rewrite as `jax.jit(softmax_all)` | jit |") and "0 / 1; 0 / 1 in 4" in jitted
    verdict = next(line for line in lines if line.startswith("- `batch_loop_to_vmap/list_map` (batch 64, eager): "))
    jitted_run = jitted.split("|")[5].rsplit("(", 1)[1].rstrip(") ")  # the run cell's ratio: `943x`
    eager_run = lines[at].split("|")[5].rsplit("(", 1)[1].rstrip(") ")
    assert f"run {jitted_run} against `jax.jit(softmax_all)`: " in verdict, (verdict, jitted)
    assert verdict.endswith(f"; against the rewrite run eagerly {eager_run}"), (verdict, lines[at])


def test_bench_corpus_cells_show_the_ratio_the_row_carries() -> None:
    """A table cell and the verdict read the same ratio: 262.54 is carried as 262.5 (4 digits) and shown as
    262x, where rounding the raw value once gave 263x in the cell beside a 262x verdict."""
    module = _bench_corpus_module("bench_corpus_under_test_cells")
    before, after = {"run_s": 262.54}, {"run_s": 1.0}
    shown = report.times(report.ratios(before, after)["run"])
    assert module.cell(before, after, "run_s", str).endswith(f"({shown})") and shown == "262x"
