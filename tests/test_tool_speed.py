"""The speed benchmark's yardsticks: the `ast.parse` floor parses what `check` reads (notebooks' code cells too),
and the profile charges each stage what it ran. Speed itself is measured in benchmarks/, never asserted here."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import tool_speed  # noqa: E402
import where_cpu_goes  # noqa: E402

sys.path.remove(str(BENCHMARKS))

LOOP_IN_JIT = """\
import jax
import jax.numpy as jnp


@jax.jit
def decay(x):
    for i in range(100):
        x = x * 0.5 + jnp.sin(x)
    return x
"""


def _notebook(*cells: str) -> str:
    return json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {"language_info": {"name": "python"}},
        "cells": [{"cell_type": "code", "source": cell, "metadata": {}, "outputs": [], "execution_count": None}
                  for cell in cells],
    })


def test_the_floor_parses_python_files_and_notebooks_code_cells(tmp_path):
    (tmp_path / "module.py").write_text("x = 1\n")
    (tmp_path / "steps.ipynb").write_text(_notebook("%matplotlib inline\nimport jax", "def step(x):\n    return x\n"))
    (tmp_path / "notes.txt").write_text("not code")
    sources, python_files, notebooks = tool_speed.floor_sources([str(tmp_path)])
    assert (python_files, notebooks) == (1, 1)
    [cells] = [s for s in sources if isinstance(s, str)]
    assert [type(node).__name__ for node in ast.parse(cells).body] == ["Expr", "Import", "FunctionDef"]  # magic masked
    wall, cpu = tool_speed.ast_parse_seconds(sources)
    assert wall >= 0 and cpu >= 0


def test_each_sample_goes_to_the_first_stage_its_stack_belongs_to():
    engine = ("/x/jaxfix/engine.py", "process_files")
    rule = ("/x/codemods/loop_to_fori.py", "visit_For")
    analysis = ("/x/jaxfix/analysis/traced.py", "is_traced")
    libcst_parse = ("/x/site-packages/libcst/_parser/entrypoints.py", "parse_module")
    importing = ("<frozen importlib._bootstrap>", "_find_and_load")
    assert where_cpu_goes.stage_of([libcst_parse, analysis, engine]) == "LibCST parse"
    assert where_cpu_goes.stage_of([analysis, rule, engine]).startswith("ModuleContext analyses")
    assert where_cpu_goes.stage_of([rule, engine]).startswith("rule visitors")
    assert where_cpu_goes.stage_of([("/x/jaxfix/codemod.py", "report"), rule, engine]).startswith("rule visitors")
    visiting = ("/x/site-packages/libcst/metadata/wrapper.py", "visit_batched")  # the rules' traversal
    assert where_cpu_goes.stage_of([rule, visiting, engine]).startswith("rule visitors")
    scopes = ("/x/site-packages/libcst/metadata/scope_provider.py", "visit_Name")
    resolving = ("/x/site-packages/libcst/metadata/wrapper.py", "_resolve_impl")
    assert where_cpu_goes.stage_of([scopes, resolving, visiting, engine]).startswith("metadata")
    assert where_cpu_goes.stage_of([analysis, resolving, visiting, engine]).startswith("metadata")
    walking = ("/x/jaxfix/analysis/metadata.py", "_walk_batch")  # jaxfix's fast traversal of the rules' batch
    assert where_cpu_goes.stage_of([rule, walking, engine]).startswith("rule visitors")
    assert where_cpu_goes.stage_of([analysis, rule, walking, engine]).startswith("ModuleContext analyses")
    parents = ("/x/jaxfix/analysis/metadata.py", "parent_map")
    assert where_cpu_goes.stage_of([parents, analysis, rule, walking, engine]).startswith("metadata")
    assert where_cpu_goes.stage_of([importing, rule, engine]) == "imports"
    assert where_cpu_goes.stage_of([importing, ("/x/jaxfix/cli.py", "main")]) == where_cpu_goes.START_UP
    assert where_cpu_goes.stage_of([("/x/jaxfix/engine.py", "_bytecode_error"), engine]).startswith("rest of the check")

# A loop over the rows of an array that maps each row independently: JF301 (batch-loop-to-vmap) reports it with a
# fix, but every rule decides on `ast` (JF301, the last LibCST visitor, moved), so a check that wants no fix parses no
# module with LibCST.
COLLECTING_LOOP_IN_JIT = """\
import jax
import jax.numpy as jnp


@jax.jit
def decay(xs: jax.Array):
    ys = []
    for x in xs:
        ys.append(jnp.sin(x))
    return jnp.stack(ys)
"""


def test_the_profile_counts_the_modules_libcst_parses(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'tiny'\n")
    (tmp_path / "loop.py").write_text(COLLECTING_LOOP_IN_JIT)
    (tmp_path / "plain.py").write_text("x = 1\n")
    run = subprocess.run([sys.executable, str(BENCHMARKS / "where_cpu_goes.py"), str(tmp_path)],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "decay" not in run.stdout and "JF" not in run.stdout  # the check's own output is thrown away
    assert re.search(r"2 Python files and 0 notebooks .*; 0 modules parsed by LibCST;", run.stdout), run.stdout
    rows = dict(re.findall(r"^\| ([^|*]+?) \| ([\d.]+) \|", run.stdout, re.MULTILINE))
    total = float(re.search(r"^\| \*\*total\*\* \| ([\d.]+) \|", run.stdout, re.MULTILINE).group(1))
    assert float(rows[where_cpu_goes.START_UP]) > 0
    cpu = float(re.search(r"cold check on one process: ([\d.]+) s CPU", run.stdout).group(1))
    assert abs(total - cpu) <= 0.02 + 0.01 * cpu  # every CPU second of the check charged to a stage, once
    assert abs(sum(map(float, rows.values())) - total) <= 0.01 * len(rows)  # every sample in one stage, rounded
