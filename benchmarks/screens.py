"""How much work the screens save on a tree of real code, and whether they hide anything there.

    python benchmarks/screens.py PATH... [--rules JF704,JF801] [--verify] [--save passes.json]

For each rule: the files its text screen (`may_match`) passes, the files its `ast` screen (`may_match_tree`)
passes after that (for a rule with a `check`, the files where `check` finds something or leaves the module to
its LibCST visitor), those of them it answers from the `ast` alone (`check`), and its findings. A file
goes to LibCST (on `check`; `apply` parses a file with a fix to build too) when some rule that passes it does not
answer from the `ast`. A rule whose screen passes many files for few
findings is where a sharper screen saves the most; every file that passes some screen costs a LibCST parse and
its scope metadata (0.1-0.5 s for a file of a few hundred lines, against milliseconds for `ast`).

Notebooks count as the module of their code cells. --verify runs each selected rule WITHOUT its `ast` screen on every file its text screen passes and compares the
findings with the screened run: a screen that hides a finding on real code shows up here (the test suite does
the same on the corpus, tests/test_screens.py). It is slow: LibCST on every such file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # jaxfix from this checkout

from jaxfix import engine, notebook, registry  # noqa: E402
from jaxfix.analysis.screen import Screen  # noqa: E402
from jaxfix.facts.module import FileFacts  # noqa: E402


def _sources(paths: list[str]) -> list[tuple[str, str, object]]:
    """(path, text, the module's facts from the project index): each path given is checked as its own project,
    as `jaxfix check PATH` would. A notebook's text is its code cells as one module, as the engine checks it."""
    found = []
    for path in map(Path, paths):
        files = [path] if path.is_file() else sorted([*path.rglob("*.py"), *path.rglob("*.ipynb")])
        project = engine.project_of([str(f) for f in files]) if files else None
        for file in files:
            try:
                if notebook.is_notebook(str(file)):
                    book = notebook.read(file.read_bytes())
                    if book.skip_reason() is not None:
                        continue
                    text = book.module()[0]
                else:
                    text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError, notebook.NotebookError):
                continue
            found.append((str(file), text, project.facts_for(str(file)) or None))
    return found


def _findings(text: str, codemod, facts) -> list[tuple[int, int, str]]:
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    diagnostics, _ = engine._run_codemods(wrapper, [codemod, *registry.yielded_to([codemod])], None, facts)
    return sorted((d.start.line, d.start.column, d.message) for d in diagnostics if d.code == codemod.code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--rules", default="", help="comma-separated codes (default: every rule)")
    parser.add_argument("--verify", action="store_true", help="compare with the rules run without their ast screen")
    parser.add_argument("--save", help="write {code: [files its screens pass]} as JSON")
    options = parser.parse_args()
    wanted = {code.strip().upper() for code in options.rules.split(",") if code.strip()}
    codemods = [c for c in registry.all_codemods() if not wanted or c.code in wanted]
    text_passes, tree_passes, findings, hidden = defaultdict(list), defaultdict(list), defaultdict(int), []
    seconds = defaultdict(float)
    answered, to_libcst = defaultdict(int), set()
    sources = _sources(options.paths)
    for path, text, facts in sources:
        try:
            screen = Screen(text, None, facts)
            screen.tree
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for codemod in codemods:
            if not codemod.may_match(text):
                continue
            text_passes[codemod.code].append(path)
            start = time.process_time()
            answer = None  # a `check`-rule's findings from the `ast`, where it gives them
            if codemod.answers_on_ast():
                answer = codemod.check(FileFacts(text, screen.tree, facts, screen))
                passed = answer is None or bool(answer)
            else:
                passed = engine._may_match_tree(codemod, screen)
            seconds[codemod.code] += time.process_time() - start
            if passed:
                tree_passes[codemod.code].append(path)
                findings[codemod.code] += len(answer) if answer is not None else len(_findings(text, codemod, facts))
                if answer is not None:
                    answered[codemod.code] += 1
                else:
                    to_libcst.add(path)
            if options.verify and not passed and _findings(text, codemod, facts):
                hidden.append(f"{codemod.code} {path}")
    print(f"{len(sources)} files under {', '.join(options.paths)}\n")
    print(
        "| rule | text screen passes | ast screen passes | answered from the ast | findings | ast screen CPU s |\n"
        "|---|---|---|---|---|---|"
    )
    for codemod in sorted(codemods, key=lambda c: -len(tree_passes[c.code])):
        code = codemod.code
        print(
            f"| {code} | {len(text_passes[code])} | {len(tree_passes[code])} | {answered[code]} | {findings[code]} "
            f"| {seconds[code]:.2f} |"
        )
    passed_any = {path for files in tree_passes.values() for path in files}
    print(f"\nfiles some ast screen passes: {len(passed_any)}; files that go to LibCST: {len(to_libcst)} of {len(sources)}")
    if options.verify:
        print(f"findings the ast screens hide: {len(hidden)}" + "".join(f"\n  {h}" for h in hidden))
    if options.save:
        Path(options.save).write_text(json.dumps(tree_passes, indent=1))
    sys.exit(1 if hidden else 0)


if __name__ == "__main__":
    main()
