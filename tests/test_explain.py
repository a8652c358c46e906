"""`jaxfix explain FILE:LINE`: what each rule decided at one line, read from the codemods themselves."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from jaxfix import corpus
from jaxfix.engine import Settings, process_text
from jaxfix.registry import all_codemods
from tests.helpers import invoke_in

STEP = textwrap.dedent(
    """\
    import jax
    import jax.numpy as jnp


    @jax.jit
    def step(x, n):
        for i in range(n):
            x = jnp.sin(x)
            if jnp.all(x > 0):
                break
        return x


    @jax.jit
    def short(x):
        for i in range(3):
            x = jnp.sin(x)
        return x


    def plain(x):
        for i in range(100):
            x = jnp.sin(x)
        return x
    """
)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(STEP)
    return tmp_path


def _lines(result) -> list[str]:
    return result.output.splitlines()


def test_a_blocked_rewrite_names_its_blocker_and_the_way_out(project: Path) -> None:
    result = invoke_in(project, "explain", "train.py:7")
    assert result.exit_code == 0, result.output
    lines = _lines(result)
    assert lines[0] == "train.py:7: for i in range(n):"
    assert lines[1] == "  in `step`: traced through jax.jit"
    jf101 = next(line for line in lines if line.startswith("JF101"))
    assert "matched, no fix" in jf101 and "the body has `break`" in jf101
    assert "static_argnames=('n',)" in jf101
    # JF102 recognised the loop and says whose it is, rather than nothing
    jf102 = next(line for line in lines if line.startswith("JF102"))
    assert "left to JF101" in jf102
    assert any(line.startswith("not applicable: ") and " rules " in line for line in lines)


def test_explain_agrees_with_check(project: Path) -> None:
    """Every finding `check` makes on the file shows as matched at its line, with the same message."""
    settings = Settings(tuple(c.code for c in all_codemods() if not c.opt_in))
    found = process_text("train.py", STEP, settings, fix=False).diagnostics
    assert found
    for diagnostic in found:
        output = invoke_in(project, "explain", f"train.py:{diagnostic.start.line}").output
        line = next(l for l in output.splitlines() if l.startswith(diagnostic.code))
        assert "matched" in line and diagnostic.message in line


def test_a_short_loop_is_explained_not_reported(project: Path) -> None:
    output = invoke_in(project, "explain", "train.py:16").output
    jf101 = next(line for line in output.splitlines() if line.startswith("JF101"))
    assert "recognised, left alone" in jf101 and "3 known steps" in jf101 and "min-trip-count (10)" in jf101
    assert "train.py:16" not in invoke_in(project, "check", "--no-cache", "train.py").output


def test_code_nothing_traces_says_so(project: Path) -> None:
    lines = _lines(invoke_in(project, "explain", "train.py:22"))
    assert lines[1] == "  in `plain`: not traced (nothing in this module or project jits, vmaps or transforms it)"
    jf101 = next(line for line in lines if line.startswith("JF101"))
    assert "not in traced code: nothing jits, vmaps or otherwise transforms `plain`" in jf101


def test_project_facts_make_a_function_traced(tmp_path: Path) -> None:
    """`model.py` has no jit; `train.py` jits its function: explain reads the project index as check does."""
    (tmp_path / "model.py").write_text(
        "import jax.numpy as jnp\n\n\ndef forward(x, n):\n    for i in range(n):\n        x = jnp.sin(x)\n"
        "        if i == 3:\n            print(i)\n    return x\n"
    )
    (tmp_path / "train.py").write_text("import jax\n\nfrom model import forward\n\nstep = jax.jit(forward)\n")
    lines = _lines(invoke_in(tmp_path, "explain", "model.py:5"))
    assert lines[1].startswith("  in `forward`: traced through jax.jit")
    assert "project index" in lines[1]
    assert any(line.startswith("JF101 loop-to-fori-loop: matched, no fix") for line in lines)


def test_a_notebook_line_is_named_by_cell(tmp_path: Path) -> None:
    case = next(c for c in corpus.notebook_cases() if c.name == "notebook_loop_across_cells")
    shutil.copy(case.folder / "before.ipynb", tmp_path / "energy.ipynb")
    result = invoke_in(tmp_path, "explain", "energy.ipynb:cell 3:4")
    assert result.exit_code == 0, result.output
    lines = _lines(result)
    assert lines[0] == "energy.ipynb:cell 3:4: for step in range(50):  # fifty damping steps"
    assert any(line.startswith("JF101 loop-to-fori-loop: matched, unsafe fix") for line in lines)


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("missing.py:3", "missing.py: no such file"),
        ("train.py:99", "line out of range (the file has 24 lines)"),
        ("train.py:0", "line out of range"),
        ("train.py", "expected FILE:LINE"),
        ("bad.py:1", "syntax error"),
        ("train.py:cell 1:2", "names a line of a notebook"),
        ("book.ipynb:3", "name a notebook line as"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(project: Path, argument: str, message: str) -> None:
    (project / "bad.py").write_text("def f(:\n")
    result = invoke_in(project, "explain", argument)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_declining_costs_nothing_outside_explain(project: Path) -> None:
    """Outside `explain`, codemods record no decisions (the channel is off)."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from jaxfix.analysis.context import ModuleContext

    from jaxfix.facts.module import FileFacts

    context = ModuleContext(MetadataWrapper(cst.parse_module(STEP)))
    visitors = [codemod(context) for codemod in all_codemods()]
    context.wrapper.visit_batched(visitors)
    assert all(not v.decisions for v in visitors)
    # The loop rules that decline on STEP (JF101, JF102) decide on `ast`: their channel is FileFacts.decline.
    quiet, explaining = FileFacts(STEP), FileFacts(STEP, explaining=True)
    for codemod in all_codemods():
        codemod.check(quiet)
        codemod.check(explaining)
    assert not quiet.decisions
    assert explaining.decisions


def test_explain_runs_the_rules_through_the_engines_loop(monkeypatch) -> None:
    """`explain` runs the rules through the engine's own loop (`engine.run_rules`, with `explaining` on), the
    one place rules run: a copy of the loop drifts from it (crashes, the `after` hook, what runs first), and then
    explain says other than check does."""
    from jaxfix import engine, explain

    calls = []
    real = engine.run_rules

    def spy(facts, codemods, parse):
        calls.append(facts.explaining)
        return real(facts, codemods, parse)

    monkeypatch.setattr(engine, "run_rules", spy)
    explanation = explain.explain_text(STEP, explain.Target("step.py", 7), all_codemods())
    assert calls == [True] and any(v.code == "JF101" for v in explanation.verdicts)
    import jaxfix.codemods

    sources = [*Path(engine.__file__).parent.rglob("*.py"), *Path(jaxfix.codemods.__file__).parent.rglob("*.py")]
    traversing = [p.name for p in sources if "visit_batched(" in p.read_text(encoding="utf-8")]
    assert traversing == ["engine.py"], "the rules run in the engine's loop only"


def test_the_cli_page_shows_what_explain_prints() -> None:
    """docs/cli.md's `jaxfix explain` examples, run from the repository root: every line shown is printed."""
    repo = Path(__file__).resolve().parent.parent
    page = (repo / "docs" / "cli.md").read_text()
    section = page.split("## `jaxfix explain`", 1)[1].split("\n## ", 1)[0]
    block = section.split("```\n", 2)[1]
    runs = [chunk for chunk in block.split("$ jaxfix ")[1:]]
    assert len(runs) == 2
    for chunk in runs:
        command, *shown = chunk.strip("\n").splitlines()
        shown = [line for line in shown if line and line != "..."]
        printed = _lines(invoke_in(repo, *command.split()))
        assert printed[: len(shown)] == shown


def test_the_annotation_explain_advises_makes_jf102_rewrite(tmp_path: Path) -> None:
    """explain's way out for an unproven row loop is true: with the annotation it names, JF102 fixes the loop."""
    code = "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(h, xs):\n    for x in xs:\n        h = jnp.tanh(h + x)\n    return h\n"
    (tmp_path / "rnn.py").write_text(code)
    jf102 = next(l for l in _lines(invoke_in(tmp_path, "explain", "rnn.py:7")) if l.startswith("JF102"))
    assert "recognised, left alone" in jf102 and "annotate it (`xs: jax.Array`)" in jf102
    settings = Settings(("JF102",), unsafe_fixes=True)
    assert not process_text("rnn.py", code, settings, fix=False).diagnostics
    annotated = code.replace("def f(h, xs):", "def f(h, xs: jax.Array):")
    fixed = process_text("rnn.py", annotated, settings, fix=True)
    assert fixed.fixes_by_code == {"JF102": 1}


@pytest.mark.parametrize(
    ("bound", "reported"),
    [("n", True), ("n + 1", True), ("cfg.n", False), ("len(xs)", False)],
)
def test_a_traced_count_is_reported_only_for_an_argument(bound: str, reported: bool) -> None:
    """A loop that carries nothing over `range(<traced bound>)`: reported where the bound is a traced argument
    (the loop cannot run under jit), explained only where it is traced by inference (a pytree's field)."""
    code = (
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(xs, n, cfg):\n"
        f"    for i in range({bound}):\n        jax.debug.print('{{}}', i)\n    return xs\n"
    )
    found = process_text("f.py", code, Settings(("JF101",)), fix=False).diagnostics
    assert bool(found) is reported
    if reported:
        assert "static_argnames=('n',)" in found[0].message


def test_a_loop_jf102_takes_is_left_to_it_when_jf101_runs_alone(tmp_path: Path) -> None:
    """Precedence does not depend on the selection: with JF101 alone, JF102 still runs (unreported), JF101 says
    whose the loop is, and `check` reports nothing on it."""
    (tmp_path / "m.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x):\n    hs = []\n    for _ in range(100):\n"
        "        x = jnp.tanh(x)\n        hs.append(x)\n    return jnp.stack(hs)\n"
    )
    lines = _lines(invoke_in(tmp_path, "explain", "m.py:8", "--select", "JF101"))
    jf101 = next(line for line in lines if line.startswith("JF101"))
    assert jf101.endswith("recognised, left alone: left to JF102 (loop-to-scan), which rewrites or reports this loop")
    assert not any(line.startswith("JF102") for line in lines)
    assert "m.py" not in invoke_in(tmp_path, "check", "m.py", "--select", "JF101").output
    assert "JF102" in invoke_in(tmp_path, "check", "m.py", "--select", "JF102").output


def test_a_loop_no_rule_takes_says_no_match_for_the_loop_rules(tmp_path: Path) -> None:
    """A `for` over a list in traced code: JF101 looks at every `for` and answers "no match", not "not
    applicable" (a check-rule says what it looks at with `looks_at`)."""
    (tmp_path / "step.py").write_text(
        "import jax\n\n\n@jax.jit\ndef step(x, ys):\n    for y in ys:\n        x = x + y\n    return x\n"
    )
    lines = _lines(invoke_in(tmp_path, "explain", "step.py:6"))
    no_match = next(line for line in lines if line.startswith("no match: "))
    assert "JF101" in no_match.split("(")[0]
