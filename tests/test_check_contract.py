"""The rule contract on `ast` (codemod.py: `check(facts)`, `fix_finding(finding, bridge)`): a `check` of the rules
that moved parses no file with LibCST; LibCST is parsed where a fix is wanted and a finding has a fix plan; the
engine's loop (`run_rules`) keeps suppression, JF001's judgement of unused suppressions, crashes and `explain`
working for them."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import libcst
import pytest

from jaxfix import engine, explain, registry
from jaxfix.analysis import fastnodes
from jaxfix.codemod import Codemod
from jaxfix.diagnostics import Diagnostic, Fix, Safety
from jaxfix.facts.module import FileFacts
from tests.helpers import invoke_in

MOVED = "JF902,JF704,JF803,JF901,JF701"
FILES = {
    "keys.py": "import jax\n\nkey = jax.random.PRNGKey(0)\n",  # JF902
    "lists.py": "import jax\n\n@jax.jit\ndef f(x):\n    return x\n\ny = f(( [1, 2] ))\n",  # JF704
    "hints.py": "import jax\n\nr = jax.device_put_replicated(x, devices)\n",  # JF901, a hint
    "draws.py": "import jax\n\ndef f(key):\n    return [jax.random.normal(key) for _ in range(3)]\n",  # JF701, no fix
    "step.py": (  # JF803
        "import jax\nfrom functools import partial\n\ndef loss(p, x):\n    return (p * x).sum()\n\n"
        "@partial(jax.pmap, axis_name='i')\ndef step(p, x):\n    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g\n"
    ),
}


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """Every LibCST parse made in this process (the engine's, fastnodes', and LibCST's own)."""
    made: list[str] = []
    real_fast, real_cst = fastnodes.parse_module, libcst.parse_module

    def fast(text, *args, **kwargs):
        made.append(text)
        return real_fast(text, *args, **kwargs)

    def plain(text, *args, **kwargs):
        made.append(text)
        return real_cst(text, *args, **kwargs)

    monkeypatch.setattr(fastnodes, "parse_module", fast)
    monkeypatch.setattr(libcst, "parse_module", plain)
    return made


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_check_of_the_moved_rules_parses_no_file_with_libcst(tmp_path, parses) -> None:
    folder = _tree(tmp_path, FILES)
    result = invoke_in(folder, "check", "--select", MOVED, "--no-cache", "-j", "1", ".")
    assert {line.split()[1] for line in result.output.splitlines() if ": JF" in line} == {"JF902", "JF704", "JF803", "JF901", "JF701"}
    assert "`( [1, 2] )` is a Python list of numbers" in result.output  # LibCST's code of the argument, parentheses included
    assert parses == []
    # JSON output wants fixes (their edits), but none of these findings has one to build
    result = invoke_in(folder, "check", "--select", MOVED, "--no-cache", "-j", "1", "--output-format", "json", ".")
    assert len(json.loads(result.output)) == 5 and parses == []


def test_apply_diff_of_a_fixable_jf901_file_parses_it_and_fixes_it(tmp_path, parses) -> None:
    folder = _tree(tmp_path, {"old.py": "import jax\n\ny = jax.tree_map(abs, [1])\n", **FILES})
    result = invoke_in(folder, "apply", "--diff", "--select", MOVED, "--no-cache", "-j", "1", ".")
    assert "-y = jax.tree_map(abs, [1])\n+y = jax.tree.map(abs, [1])\n" in result.output
    assert "b/old.py" in result.output and "b/keys.py" not in result.output
    assert parses and all("tree_map" in text for text in parses)  # the files with nothing to fix: not parsed


def test_explain_shows_the_declines_of_a_moved_rule() -> None:
    text = "import jax\n\ntry:\n    key = jax.random.PRNGKey(0)\nexcept AttributeError:\n    key = None\n"
    shown = explain.explain_text(text, explain.Target("keys.py", 4), [registry.by_code("JF902")])
    (verdict,) = shown.verdicts
    assert verdict.code == "JF902" and verdict.outcome == "recognised, left alone"
    assert "compatibility shim" in verdict.detail


def test_a_suppression_of_a_check_finding_is_used_and_jf001_sees_it() -> None:
    rules = [registry.by_code("JF001"), registry.by_code("JF902")]
    used = "import jax\n\nkey = jax.random.PRNGKey(0)  # noqa: JF902\n"
    assert engine.analyse(used, rules)[0] == []
    unused = "import jax\n\nkey = jax.random.key(0)  # noqa: JF902\n"
    assert [d.code for d in engine.analyse(unused, rules)[0]] == ["JF001"]


def test_jf001_judges_on_ast_and_builds_its_fix_only_when_asked(tmp_path, parses) -> None:
    text = "import jax\n\nkey = jax.random.key(0)  # noqa: E501, JF902\n# jaxfix: ignore\nx = 1\n"
    folder = _tree(tmp_path, {"m.py": text})
    result = invoke_in(folder, "check", "--select", "JF001,JF902", "--no-cache", "-j", "1", ".")
    assert "m.py:3:26: JF001 [*] unused suppression in `# noqa: E501, JF902`: JF902 finds nothing" in result.output
    assert "m.py:4:1: JF001 [*] unused suppression `# jaxfix: ignore`" in result.output
    assert parses == []
    invoke_in(folder, "apply", "--select", "JF001,JF902", "--no-cache", "-j", "1", ".")
    assert (folder / "m.py").read_text() == "import jax\n\nkey = jax.random.key(0)  # noqa: E501\nx = 1\n"


def test_jf001_counts_lines_as_ast_does_a_lone_carriage_return_included() -> None:
    text = "import jax\rx = 1\ry = 2  # noqa: JF902\r"
    (finding,) = engine.analyse(text, [registry.by_code("JF001")])[0]
    assert (finding.start.line, finding.start.column) == (3, 8)


class _Negate(Codemod):
    """A rule for this test only: `-x` of a name `x`, fixed to `(0 - x)` through a fix plan (the `ast` node)."""

    code = "JF999"
    name = "negate-for-test"
    summary = "test rule"
    fix_safety = Safety.SAFE
    screen = ("-",)

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        found = []
        for node in facts.binder.nodes_of(ast.UnaryOp):
            if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Name):
                found.append(cls.finding(facts, node, "a negated name", description="Subtract", plan=node))
        return found

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix:
        spelled = bridge.cst_of(finding.plan)
        operand = spelled.expression
        return Fix(Safety.SAFE, "Subtract", ((spelled, libcst.parse_expression(f"(0 - {operand.value})")),))


class _Crashes(_Negate):
    code = "JF998"
    name = "crashes-for-test"

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        raise RuntimeError("boom")


def test_a_fix_plan_is_built_on_libcst_only_where_fixes_are_wanted(parses) -> None:
    text = "y = -x\n"
    found, errors, wrapper = engine.analyse(text, [_Negate])
    assert wrapper is None and parses == [] and not errors
    (finding,) = found
    assert finding.fixable and finding.fix.changes == () and (finding.start.column, finding.end.column) == (5, 7)
    found, errors, wrapper = engine.analyse(text, [_Negate], fixes=True)
    assert wrapper is not None and parses and not errors
    (finding,) = found
    assert engine.apply_fixes(wrapper.module, [finding.fix]).code == "y = (0 - x)\n"


def test_a_check_that_crashes_is_left_out_and_the_others_still_run() -> None:
    found, errors, _ = engine.analyse("y = -x\n", [_Crashes, _Negate])
    assert [d.code for d in found] == ["JF999"]
    assert errors == ["JF998 crashed and was skipped for this file: RuntimeError: boom"]


class _Loops(_Negate):
    """A `check`-rule for this test only: every `for` statement."""

    code = "JF997"
    name = "loops-for-test"
    screen = ("for",)

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        return [cls.finding(facts, node, "a loop") for node in facts.binder.nodes_of(ast.For)]


def test_a_check_rule_yields_to_another_by_the_place_of_its_finding() -> None:
    """registry.yield_checked: JF101 (a `check`-rule) leaves the loop to a `check`-rule it yields to, which reports
    on the whole `for` statement while JF101 reports on its `range(...)`; `explain` gives the reason there."""
    from jaxfix.codemod import YieldsTo

    fori = registry.by_code("JF101")
    text = "import jax\n\n@jax.jit\ndef f(x):\n    for i in range(100):\n        x = x * 2 + i\n    return x\n"
    yielding = type("Fori", (fori,), {"yields_to": (YieldsTo("JF997", "left to the test's loop rule"),), "__module__": fori.__module__})
    assert [d.code for d in engine.analyse(text, [yielding, _Loops])[0]] == ["JF997"]
    facts = FileFacts(text, explaining=True)
    runs, _, _ = engine.run_rules(facts, [yielding, _Loops], lambda: None)
    (run,) = [r for r in runs if r.code == "JF101"]
    assert not run.diagnostics and [d.reason for d in run.decisions] == ["left to the test's loop rule"]
