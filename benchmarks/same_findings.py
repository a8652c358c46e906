"""Whether a change to jaxfix changed what it reports or rewrites: a snapshot of `check` and `apply --diff` on
real trees, saved once before the change and compared after it.

    python benchmarks/same_findings.py --save BEFORE.json [TREE ...]
    python benchmarks/same_findings.py --compare BEFORE.json [TREE ...]

Each TREE is checked as a project from its own root, the way a user runs jaxfix there:
`jaxfix check --unsafe-fixes --output-format json .` (every finding, its message and its fix's edits) and
`jaxfix apply --diff --unsafe-fixes .` (the rewritten text; nothing is written). The default trees are the
repository's `examples/` and `corpus/` and every folder of `$JAXFIX_REALSRC` (default `/work/realsrc`), the
unpacked source archives of real projects (see docs/benchmarks.md). `--compare` prints each finding that
appeared or disappeared and each changed diff hunk, and exits with 1 when anything differs. A step of a
refactoring that must keep the findings unchanged is done when this exits with 0.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def default_trees() -> list[Path]:
    realsrc = Path(os.environ.get("JAXFIX_REALSRC", "/work/realsrc"))
    real = sorted(p for p in realsrc.iterdir() if p.is_dir() and p.name != "dl") if realsrc.is_dir() else []
    return [ROOT / "examples", ROOT / "corpus", *real]


def _jaxfix(tree: Path, *arguments: str) -> str:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "jaxfix", *arguments, "--no-cache", "-j", "1", "."],
                            cwd=tree, capture_output=True, text=True, env=environment)
    if result.returncode not in (0, 1):
        raise SystemExit(f"jaxfix {' '.join(arguments)} failed in {tree} (exit {result.returncode}):\n"
                         f"{result.stderr[-2000:]}")
    return result.stdout


def snapshot(tree: Path) -> dict:
    """The findings (as stable one-line keys) and the diff of one tree."""
    findings = json.loads(_jaxfix(tree, "check", "--unsafe-fixes", "--output-format", "json", "--exit-zero", "-q"))
    keys = []
    for finding in findings:
        path = os.path.relpath(finding["filename"], tree)
        fix = finding.get("fix") or {}
        edits = [(e["location"]["row"], e["location"]["column"], e["content"]) for e in fix.get("edits", [])]
        keys.append(json.dumps([path, finding["location"]["row"], finding["location"]["column"], finding["code"],
                                finding["message"], fix.get("applicability"), fix.get("message"), edits]))
    diff = _jaxfix(tree, "apply", "--diff", "--unsafe-fixes", "-q")
    return {"findings": sorted(keys), "diff": diff}


def compare(before: dict, after: dict, name: str) -> bool:
    same = True
    gone = sorted(set(before["findings"]) - set(after["findings"]))
    new = sorted(set(after["findings"]) - set(before["findings"]))
    for label, keys in (("-", gone), ("+", new)):
        for key in keys:
            same = False
            path, row, column, code, message, applicability, *_ = json.loads(key)
            print(f"{name}: {label} {path}:{row}:{column}: {code} [{applicability}] {message}")
    if before["diff"] != after["diff"]:
        same = False
        print(f"{name}: the diff changed:")
        sys.stdout.writelines(difflib.unified_diff(before["diff"].splitlines(True), after["diff"].splitlines(True),
                                                   "before", "after", n=1))
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--save", metavar="FILE", type=Path)
    action.add_argument("--compare", metavar="FILE", type=Path)
    parser.add_argument("trees", nargs="*", type=Path)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="trees checked at once")
    options = parser.parse_args()
    trees = [tree.resolve() for tree in options.trees] or default_trees()
    with ThreadPoolExecutor(options.jobs) as pool:
        results = dict(zip((t.name for t in trees), pool.map(snapshot, trees)))  # by name: a worktree compares with main
    if options.save:
        options.save.write_text(json.dumps(results, indent=1))
        counts = ", ".join(f"{t} {len(r['findings'])}" for t, r in results.items())
        print(f"saved {len(results)} trees to {options.save}: {counts}")
        return
    before = json.loads(options.compare.read_text())
    same = True
    for tree, result in results.items():
        if tree not in before:
            print(f"{tree}: not in {options.compare}")
            same = False
            continue
        same &= compare(before[tree], result, tree)
    print("same findings and fixes" if same else "findings or fixes changed")
    raise SystemExit(0 if same else 1)


if __name__ == "__main__":
    main()
