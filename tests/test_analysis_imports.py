"""The analyses form no import cycle, function-level imports included (issue 34): each is typed against the
`ModuleModel` Protocol of jaxfix/facts/model.py, which imports nothing of jaxfix, so only analysis/context.py,
which builds them, imports them all; a fact two analyses share lives in a module below both."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JAXFIX = ROOT / "jaxfix"


def _imported(path: Path) -> set[str]:
    """The jaxfix modules a file imports anywhere in it (`from jaxfix.analysis import arrays` imports
    `jaxfix.analysis.arrays`), as dotted names, whether or not they are modules."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name == "jaxfix" or name.startswith("jaxfix.")}


def _analysis_graph() -> dict[str, set[str]]:
    """The imports among jaxfix/analysis/, codegen.py and codemod.py."""
    paths = {f"jaxfix.analysis.{p.stem}": p for p in (JAXFIX / "analysis").glob("*.py") if p.stem != "__init__"}
    paths |= {"jaxfix.codegen": JAXFIX / "codegen.py", "jaxfix.codemod": JAXFIX / "codemod.py"}
    return {module: (_imported(path) & set(paths)) - {module} for module, path in paths.items()}


def test_the_analyses_form_no_import_cycle() -> None:
    graphlib.TopologicalSorter(_analysis_graph()).prepare()  # CycleError names the cycle


def test_no_analysis_imports_the_context_that_builds_it() -> None:
    graph = _analysis_graph()
    assert sorted(m for m, imported in graph.items() if "jaxfix.analysis.context" in imported) == ["jaxfix.codemod"]


def test_the_model_protocol_imports_nothing_of_jaxfix() -> None:
    assert _imported(JAXFIX / "facts" / "model.py") == set()
