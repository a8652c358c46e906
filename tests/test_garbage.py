"""A file's check leaves no reference cycle that holds its `ast` tree: once the rules have answered, its facts
are freed by reference counting. A cycle there (a scope and its bindings, an analysis and its memo, two
closures calling each other) leaves the whole tree for the cyclic collector, whose scans of it cost a fifth of a
cold check's CPU on real code before `FileFacts.release`."""

from __future__ import annotations

import ast
import gc
from collections import Counter
from pathlib import Path

from jaxfix.engine import analyse
from jaxfix.registry import all_codemods

ROOT = Path(__file__).resolve().parent.parent


def _cyclic_garbage(call) -> list[object]:
    """What the cyclic collector would free after `call()` (run with the collector off)."""
    gc.collect()
    gc.disable()
    try:
        call()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        gc.enable()


def test_a_checked_file_leaves_no_tree_to_the_cyclic_collector() -> None:
    codemods = [c for c in all_codemods() if not c.opt_in]
    files = sorted([*(ROOT / "examples").rglob("*.py"), *(ROOT / "corpus").rglob("*_before.py"),
                    *(ROOT / "tests" / "planted").rglob("*.py")])
    checked, left = 0, Counter()
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        parsed_by_libcst = []

        def check() -> None:  # the engine parses the tree itself: nothing here holds it
            parsed_by_libcst.append(analyse(text, codemods)[2] is not None)

        garbage = _cyclic_garbage(check)
        if parsed_by_libcst[0]:  # a visitor rule's LibCST analyses still hold cycles; they are not on `check`
            continue
        checked += 1
        left.update(f"{path.relative_to(ROOT)}: {type(o).__name__}" for o in garbage
                    if isinstance(o, ast.AST) or type(o).__module__.startswith("jaxfix."))
    assert checked > 50
    assert not left, left.most_common(10)
