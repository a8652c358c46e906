"""Mutation check of `jaxfix verify`: how many small wrong edits of correct rewrites it catches.

For every corpus `after.py` of the loop, branch and vmap rules, up to 3 small mutations (found with `ast`):
bound off by one (`fori_loop`/`range` upper bound + 1, `<` <-> `<=` in a loop condition or comparison), branch
swap (`lax.cond`/`jnp.where`/`lax.select` operands), axis change (`in_axes`/`out_axes`/`axis=` + 1), dtype change
(float32 <-> float16, int32 -> int16), `reverse` flipped in `lax.scan`. A mutant counts only when it really changes
the result on the case's own arguments (case.toml; run both in a helper process, compared with the case's
rtol/atol or 1e-6): one that changes nothing is not a bug to catch; one that gives no result within 30 s (a
`lax.while_loop` that no longer terminates) is left out and listed. Each counted mutant is then verified against the case's
before.py exactly as `jaxfix verify before.py mutant.py --max-examples N` does (the same targets and runner, all
functions both files define, in one worker for all mutants), and counts as caught when some function differs.

    python benchmarks/mutation.py [--max-examples 20] [--rules loop_to_fori,...] [--out results.jsonl]

Prints the fraction caught per rule and overall, and lists the misses.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, TimeoutError
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # an installed jaxfix (or PYTHONPATH) comes first

RULES = [
    "loop_to_fori", "loop_to_scan", "while_to_while_loop", "fori_at_set_to_scan", "branch_to_cond",
    "branch_to_where", "elif_chain", "builtin_on_traced", "batch_loop_to_vmap",
]  # fmt: skip
MAX_MUTANTS = 3
HANG_SECONDS = 30
FLOAT_SWAP = {"float32": "float16", "float16": "float32", "float64": "float32", "bfloat16": "float32", "int32": "int16", "int64": "int32"}
COMPARE_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def sites(tree: ast.Module) -> list[tuple[str, list[int], callable]]:
    """(kind, path to the node, how to mutate the node in a copy of the tree)."""
    found = []
    nodes = list(ast.walk(tree))
    for index, node in enumerate(nodes):
        if isinstance(node, ast.Call):
            name = _name(node.func)
            if name == "fori_loop" and len(node.args) >= 2:
                found.append(("bound off by one", index, lambda n: setattr(n, "args", [n.args[0], _plus_one(n.args[1]), *n.args[2:]])))
            if name == "range" and node.args:
                found.append(("bound off by one", index, lambda n: setattr(n, "args", [*n.args[:-1], _plus_one(n.args[-1])] if len(n.args) > 1 else [_plus_one(n.args[0])])))
            if name in ("cond", "where", "select") and len(node.args) >= 3:
                found.append(("branch swap", index, lambda n: setattr(n, "args", [n.args[0], n.args[2], n.args[1], *n.args[3:]])))
            if name == "scan":
                found.append(("reverse flipped", index, _flip_reverse))
            for keyword in node.keywords:
                if keyword.arg in ("in_axes", "out_axes", "axis") and _axis_changeable(keyword.value):
                    found.append(("axis change", index, lambda n, arg=keyword.arg: _change_axis(n, arg)))
                if keyword.arg == "dtype" and _name(keyword.value) in FLOAT_SWAP:
                    found.append(("dtype change", index, lambda n: _change_dtype(n)))
        elif isinstance(node, ast.Attribute) and node.attr in FLOAT_SWAP and isinstance(node.value, ast.Name) and node.value.id in ("jnp", "np"):
            found.append(("dtype change", index, lambda n: setattr(n, "attr", FLOAT_SWAP[n.attr])))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE_SWAP:
            found.append(("bound off by one", index, lambda n: setattr(n, "ops", [COMPARE_SWAP[type(n.ops[0])]()])))
    return found


def _plus_one(expr: ast.expr) -> ast.expr:
    return ast.BinOp(left=expr, op=ast.Add(), right=ast.Constant(1))


def _flip_reverse(node: ast.Call) -> None:
    for keyword in node.keywords:
        if keyword.arg == "reverse":
            keyword.value = ast.UnaryOp(op=ast.Not(), operand=keyword.value)
            return
    node.keywords.append(ast.keyword(arg="reverse", value=ast.Constant(True)))


def _axis_changeable(value: ast.expr) -> bool:
    if isinstance(value, ast.Constant) and (value.value is None or isinstance(value.value, int)):
        return True
    return isinstance(value, ast.Tuple) and any(isinstance(e, ast.Constant) for e in value.elts)


def _change_axis(node: ast.Call, arg: str) -> None:
    def change(value: ast.expr) -> ast.expr:
        if isinstance(value, ast.Constant) and value.value is None:
            return ast.Constant(0)
        if isinstance(value, ast.Constant) and isinstance(value.value, int):
            return ast.Constant(1 if value.value == 0 else 0)
        if isinstance(value, ast.Tuple):
            elts = list(value.elts)
            for i, e in enumerate(elts):
                if isinstance(e, ast.Constant):
                    elts[i] = change(e)
                    break
            return ast.Tuple(elts=elts, ctx=ast.Load())
        return value

    for keyword in node.keywords:
        if keyword.arg == arg:
            keyword.value = change(keyword.value)


def _change_dtype(node: ast.Call) -> None:
    for keyword in node.keywords:
        if keyword.arg == "dtype" and isinstance(keyword.value, ast.Attribute):
            keyword.value.attr = FLOAT_SWAP[keyword.value.attr]


def mutants(text: str) -> list[tuple[str, str]]:
    """Up to MAX_MUTANTS (kind, source) pairs, one kind after another so that kinds are mixed."""
    tree = ast.parse(text)
    found = sites(tree)
    by_kind: dict[str, list] = defaultdict(list)
    for site in found:
        by_kind[site[0]].append(site)
    order = []
    while any(by_kind.values()) and len(order) < 3 * MAX_MUTANTS:
        for kind in list(by_kind):
            if by_kind[kind]:
                order.append(by_kind[kind].pop(0))
    out, seen = [], set()
    for kind, index, mutate in order:
        mutated = copy.deepcopy(tree)
        try:
            mutate(list(ast.walk(mutated))[index])
            source = ast.unparse(ast.fix_missing_locations(mutated))
        except Exception:
            continue
        if source not in seen and source != ast.unparse(tree):
            seen.add(source)
            out.append((kind, source))
    return out  # filtered to MAX_MUTANTS that change results by the caller


def changes_result(case_folder: str, mutant_path: Path) -> bool:
    """Whether the mutant gives another result (or raises) on the case's own arguments (in a helper process)."""
    from jaxfix import corpus

    case = next(c for c in corpus.cases() if str(c.folder) == case_folder)

    try:
        args, kwargs = corpus.arguments(case)
        wanted = corpus.call(corpus.load_function(case.before, case.spec["entry"], tag="mb"), args, kwargs)
    except Exception:
        return False  # nothing to compare with
    try:
        args, kwargs = corpus.arguments(case)
        actual = corpus.call(corpus.load_function(mutant_path, case.spec["entry"], tag=f"mm{mutant_path.stem}"), args, kwargs)
    except Exception:
        return True
    try:
        corpus.assert_same(actual, wanted, rtol=case.spec.get("rtol", 1e-6), atol=case.spec.get("atol", 1e-6))
    except AssertionError:
        return True
    return False


def _restart(pool: ProcessPoolExecutor, again: bool = True) -> ProcessPoolExecutor | None:
    """Stop the helper process (a lax.while_loop cannot be interrupted: its process is killed)."""
    for process in list(getattr(pool, "_processes", {}).values()):
        process.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    return ProcessPoolExecutor(max_workers=1) if again else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=20)
    parser.add_argument("--rules", default=",".join(RULES))
    parser.add_argument("--out", default="")
    options = parser.parse_args()

    from jaxfix import corpus
    from jaxfix.verify import collect, runner
    from jaxfix.verify.settings import VerifySettings
    from jaxfix.verify.targets import DIFFERS, Options

    rules = options.rules.split(",")
    cases = [c for c in corpus.cases() if c.codemod in rules and c.runnable and not c.negative and c.compared and "original_raises" not in c.spec]
    scratch = Path(tempfile.mkdtemp(prefix="jaxfix-mutation-"))
    counted = []  # (rule, case id, kind, mutant path, targets)
    hanging: list[str] = []  # mutants that do not finish on the case's own arguments: not counted
    pool = ProcessPoolExecutor(max_workers=1)
    started = time.monotonic()
    for case in cases:
        kept = 0
        for number, (kind, source) in enumerate(mutants(case.after.read_text(encoding="utf-8"))):
            if kept == MAX_MUTANTS:
                break
            path = scratch / f"{case.codemod}__{case.name}__{number}.py"
            path.write_text(source, encoding="utf-8")
            try:
                changed = pool.submit(changes_result, str(case.folder), path).result(timeout=HANG_SECONDS)
            except TimeoutError:
                hanging.append(f"{case.id} ({kind}, {path.name})")
                pool = _restart(pool)
                continue
            except Exception as error:  # the helper process died
                hanging.append(f"{case.id} ({kind}, {path.name}): {type(error).__name__}")
                pool = _restart(pool)
                continue
            if not changed:
                continue
            kept += 1
            targets = collect.pair_targets(case.before, path, [], VerifySettings())
            counted.append((case.codemod, case.id, kind, path, targets))
    _restart(pool, again=False)
    print(f"{len(hanging)} mutants left out: no result within {HANG_SECONDS} s on the case's arguments: {', '.join(hanging)}", flush=True)
    print(f"{len(counted)} mutants change results on their case's arguments ({len(cases)} cases, {time.monotonic() - started:.0f} s)", flush=True)

    caught: dict[str, list[bool]] = defaultdict(list)
    misses = []
    out = open(options.out, "w", encoding="utf-8") if options.out else None
    everything = [target for *_, targets in counted for target in targets]
    stream = runner.run(everything, Options(max_examples=options.max_examples))  # a report per target, in order
    for rule, case_id, kind, path, targets in counted:
        reports = [next(stream) for _ in targets]
        hit = any(r.status == DIFFERS for r in reports)
        caught[rule].append(hit)
        why = "; ".join(f"{r.name}: {r.status} {r.reason}"[:160] for r in reports)
        if not hit:
            misses.append(f"{case_id} ({kind}, {path.name}): {why}")
        line = {"rule": rule, "case": case_id, "kind": kind, "mutant": str(path), "caught": hit, "reports": why}
        print(json.dumps(line), flush=True)
        if out:
            out.write(json.dumps(line) + "\n")
            out.flush()
    total = [hit for hits in caught.values() for hit in hits]
    print()
    for rule in rules:
        hits = caught.get(rule, [])
        if hits:
            print(f"{rule:24s} {sum(hits):3d}/{len(hits):3d} caught ({100 * sum(hits) / len(hits):.0f}%)")
    if total:
        print(f"{'overall':24s} {sum(total):3d}/{len(total):3d} caught ({100 * sum(total) / len(total):.1f}%), {time.monotonic() - started:.0f} s")
    print("misses:")
    for miss in misses:
        print("  " + miss)


if __name__ == "__main__":
    main()
