"""`jaxfix bench` over the whole corpus: the payoff of every positive case, original against rewrite, written to
docs/benchmarks-corpus.md (its own page: docs/benchmarks.md links to it and is written by hand) as one table per
codemod, with the machine and versions it ran on.

    python benchmarks/bench_corpus.py [--cases GLOB] [--size 300] [--batch 512] [--repeats 10] [--out docs/benchmarks-corpus.md]
                                      [--save results.json | --load results.json]

Each positive case (one with an after.py) is measured as `jaxfix bench before.py after.py --function ENTRY
--size 300 --batch 512` measures it (JF301's cases with `--jit-rewrite` too): one worker per such group of
cases, so JAX is imported twice. `--size` sets the trip
count where case.toml names it (`size_arg`), `--batch` tiles the arrays case.toml's `batch_args` names; every
other case runs on its own arguments. The targets are then checked against the numbers, and the cases
that miss them are listed with theirs: a 300-step loop (JF101, JF102) should compile >= 5x faster; an eager
batch loop at 512 (JF301) should run >= 50x faster, judged against the rewrite under
jax.jit (the figure against the rewrite run eagerly is listed beside it); a jit hoisted out of a loop (JF502),
or a float no longer static (JF503), should bring the compilations of one call from N to 1. Every device JAX
shows is measured (the default backend's and the CPU): with more than one, each codemod gets a table per
device.
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # jaxfix from this checkout

from jaxfix import corpus, registry  # noqa: E402
from jaxfix.bench import report, sizes  # noqa: E402
from jaxfix.bench import run as bench_run  # noqa: E402
from jaxfix.bench.options import BenchOptions  # noqa: E402
from jaxfix.verify import collect  # noqa: E402
from jaxfix.verify.settings import VerifySettings  # noqa: E402

LOOP_CODEMODS = ("loop_to_fori", "loop_to_scan")
BATCH_CODEMOD = "batch_loop_to_vmap"  # JF301: its eager cases are also measured with the rewrite under jax.jit


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def versions() -> tuple[str, str, list[str]]:
    """JAX and jaxlib as the worker's interpreter sees them (this interpreter: the worker is `sys.executable`), and
    the platforms of its devices (the default backend's and the CPU, as jaxfix bench measures them)."""
    code = (
        "import jax, jaxlib; from jaxfix.verify.worker import devices; "
        "print(jax.__version__, jaxlib.__version__, ' '.join(sorted({d.platform for d in devices()})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout.split()
    return out[0], out[1], out[2:]


def code_of(codemod: str) -> str:
    found = next((c for c in registry.all_codemods() if c.__module__.rsplit(".", 1)[-1] == codemod), None)
    return found.code if found else codemod


def targets_for(cases: list[corpus.Case], size: int, batch: int) -> tuple[list, dict[str, corpus.Case], dict[str, list[str]]]:
    settings = VerifySettings()
    targets, by_target, changed = [], {}, {}
    for case in cases:
        for target in collect.pair_targets(case.before, case.after, [case.spec["entry"]], settings):
            target, what = sizes.resize(target, size, batch)
            targets.append(target)
            by_target[target.id] = case
            changed[target.id] = what
    return targets, by_target, changed


def cell(before: dict, after: dict, key: str, show) -> str:
    if before.get("error") or after.get("error"):
        return f"{'-' if before.get('error') else show(before.get(key))} / {'-' if after.get('error') else show(after.get(key))}"
    return f"{show(before.get(key))} / {show(after.get(key))} ({report.times(report.rounded_ratio(before.get(key), after.get(key)))})"


def device_name(row: dict[str, Any]) -> str:
    kind = row.get("device_kind") or ""
    return row["device"] + (f" ({kind})" if kind and kind != row["device"] else "")


def table(rows: list[dict[str, Any]], by_target: dict[str, corpus.Case], changed: dict[str, list[str]]) -> list[str]:
    """One table per device the rows were measured on (a heading each when there are more than one)."""
    devices = list(dict.fromkeys(device_name(row) for row in rows if row["device"] is not None))
    if len(devices) <= 1:
        return _table(rows, by_target, changed)
    out: list[str] = []
    for device in devices:
        out += [f"### On {device}", ""] + _table([r for r in rows if r["device"] is not None and device_name(r) == device], by_target, changed) + [""]
    unmeasured = [row for row in rows if row["device"] is None]
    return out + (_table(unmeasured, by_target, changed) if unmeasured else [])


def _table(rows: list[dict[str, Any]], by_target: dict[str, corpus.Case], changed: dict[str, list[str]]) -> list[str]:
    lines = [
        "| case | mode | input | compile: original / rewrite | run (median) | compilations (first call; all calls) | temp memory |",
        "|---|---|---|---|---|---|---|",
    ]
    notes = []
    for row in rows:
        case = by_target[row["target"]]
        if row["device"] is None:
            lines.append(f"| `{case.name}` | - | - | not measured: {row['reason']} | | | |")
            continue
        before, after = row["before"], row["after"]
        sized = f" ({', '.join(changed[row['target']])})" if changed[row["target"]] else ""
        mode = row["mode"].replace("eager: the original fails under jit", "eager†")
        lines.append(f"| `{case.name}`{sized} | {mode} | {row['input'].replace('|', '/')} | {cells(before, after)}")
        jitted = row.get("after_jit")
        if jitted:  # the same original against the rewrite under jax.jit (--jit-rewrite)
            lines.append(f"| {report.JITTED_MARK} rewrite as `{jitted.get('run_as', 'jax.jit(rewrite)')}` | jit | | {cells(before, jitted)}")
        for label, side in (("original", before), ("rewrite", after), ("rewrite under jax.jit", jitted or {})):
            if side.get("error"):
                notes.append(f"- `{case.name}`: the {label} cannot be measured: {shorten(side['error'])}")
    return lines + ([""] + notes if notes else [])


def cells(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The row's cells from compile on: `original / rewrite (ratio)` each."""
    first = f"{_int(before.get('first_compiles'))} / {_int(after.get('first_compiles'))}"
    total = f"{_int(before.get('compiles'))} / {_int(after.get('compiles'))} in {before.get('calls') or after.get('calls')}"
    return (
        f"{cell(before, after, 'compile_s', report.seconds)} | {cell(before, after, 'run_s', report.seconds)} | "
        f"{first}; {total} | {cell(before, after, 'temp_bytes', report.size)} |"
    )


def shorten(text: str, limit: int = 110) -> str:
    text = text.split(" (/")[0]  # no installation paths
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _int(value: Any) -> str:
    return "-" if value is None else str(value)


def targets_check(rows: list[dict[str, Any]], by_target: dict[str, corpus.Case], changed: dict[str, list[str]], size: int, batch: int) -> list[str]:
    """The targets, case by case: met or missed, with the number."""
    out = []

    def verdict(ok: bool) -> str:
        return "meets" if ok else "**misses**"

    loops, batches, jitted, hoists = [], [], [], []
    counts = {"jit": [0, 0], "eager": [0, 0]}  # eager JF301 cases: [meeting 50x, measured], per comparison
    several = len({device_name(row) for row in rows if row["device"] is not None}) > 1
    for row in rows:
        case = by_target[row["target"]]
        name = f"`{case.id}`" + (f" on {device_name(row)}" if several and row["device"] is not None else "")
        measured = row["device"] is not None and not row["before"].get("error") and not row["after"].get("error")
        if case.codemod in LOOP_CODEMODS and f"steps={size}" in changed[row["target"]]:
            ratio = row["ratios"]["compile"] if measured else None
            loops.append(f"- {name} ({size} steps): compile {report.times(ratio)}: {verdict(ratio is not None and ratio >= 5)} >= 5x")
        elif case.codemod == BATCH_CODEMOD:
            at = sized_as(changed[row["target"]]) or "its own batch (no batch_args)"
            if measured and row["mode"] == "jit":
                ratios = row["ratios"]
                jitted.append(
                    f"- {name} ({at}, jitted: the loop is unrolled at trace time): compile {report.times(ratios['compile'])}, "
                    f"run {report.times(ratios['run'])}"
                )
                continue
            batches.append(f"- {name} ({at}, eager): {batch_verdict(row, measured, counts)}")
        elif case.codemod in ("jit_in_loop", "static_float_arg"):
            first = (row["before"].get("first_compiles"), row["after"].get("first_compiles")) if measured else (None, None)
            ok = first[1] == 1 and first[0] is not None and first[0] > 1
            hoists.append(f"- {name}: compilations in one call {_int(first[0])} -> {_int(first[1])}: {verdict(ok)} N -> 1")
    out += ["Loops of 300 steps compile >= 5x faster (JF101, JF102; the cases whose trip count `size_arg` sets):", ""]
    out += loops or ["- (no such case measured)"]
    out += [
        "",
        f"Eager batch loops at {batch} run >= 50x faster (JF301). The target is judged on "
        "the eager loop against the rewrite called under `jax.jit` (`jaxfix bench --jit-rewrite`), and the ratio "
        "against the rewrite run eagerly, as `jaxfix bench` runs it by default, is listed beside it. "
        f"Against the jitted rewrite {counts['jit'][0]} of {counts['jit'][1]} cases meet 50x; "
        f"against the eager rewrite {counts['eager'][0]} of {counts['eager'][1]}.",
        "",
    ]
    out += batches or ["- (no such case measured)"]
    if jitted:
        out += ["", "Batch loops inside a jitted function (JF301; not eager, so the target above does not apply: the payoff is compile):", ""]
        out += jitted
    out += ["", "Compilations N -> 1 per call for hoisted jits (JF502) and floats no longer static (JF503):", ""]
    out += hoists or ["- (no such case measured)"]
    return out


def sized_as(changed: list[str]) -> str:
    """What the sizes did to a JF301 case: `batch 512` (batch_args tiled), `300 rows` (its size_arg is the count)."""
    return ", ".join(f"batch {what[6:]}" if what.startswith("batch=") else f"{what[6:]} rows set by size_arg" for what in changed)


def batch_verdict(row: dict[str, Any], measured: bool, counts: dict[str, list[int]]) -> str:
    """An eager JF301 case: the run ratio against the jitted rewrite (the verdict) and against the eager one."""
    if not measured:
        return "not measured (see its table)"
    jitted, ratios_jit = row.get("after_jit"), row.get("ratios_jit")
    if row["after"].get("jitted"):  # the rewrite is jit-wrapped as written: `after` is the jitted rewrite
        jitted, ratios_jit, against_eager = {"run_as": "the rewrite as written"}, row["ratios"], "(no eager rewrite)"
    else:
        eager = row["ratios"]["run"]
        against_eager = f"against the rewrite run eagerly {report.times(eager)}"
        if eager is not None:
            counts["eager"][1] += 1
            counts["eager"][0] += eager >= 50
    if jitted is None:
        return f"run {against_eager}: **not judged**: the rewrite was not measured under jax.jit"
    if jitted.get("error"):
        return f"the rewrite {shorten(jitted['error'])}: **not judged**; run {against_eager}"
    ratio = (ratios_jit or {}).get("run")
    counts["jit"][1] += 1
    counts["jit"][0] += ratio is not None and ratio >= 50
    ok = "meets" if ratio is not None and ratio >= 50 else "**misses**"
    run_as = jitted.get("run_as") or "jax.jit(rewrite)"
    run_as = f"`{run_as}`" if run_as.startswith("jax.jit") else run_as
    return f"run {report.times(ratio)} against {run_as}: {ok} >= 50x; {against_eager}"


def load_line(facts: dict[str, Any]) -> str:
    """What else the machine was doing: timings under load move far more than compile times or counts."""
    load = facts.get("load")
    if load is None:
        return "- The machine's load while this ran was not recorded."
    cores = os.cpu_count() or 1
    text = f"- 1-minute load average at the start / end of the run: {load[0]} / {load[1]} ({cores} cores)."
    if max(load) >= cores:
        text += (
            " The machine was shared with other jobs: timings move by 10% or more between runs, more for "
            "sub-millisecond times, and the run time of `lax` loops (many small steps, each waiting for a core) "
            "suffers more than one unrolled kernel. Compile times and compilation counts are the figures that hold."
        )
    return text


def devices_line(facts: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """Which devices the tables cover: a GPU is named only where one was measured."""
    measured = list(dict.fromkeys(device_name(row) for row in rows if row["device"] is not None))
    platforms = facts.get("platforms") or sorted({row["device"] for row in rows if row["device"] is not None})
    if all(p == "cpu" for p in platforms):
        return (
            "- No GPU was available to this run: one table per codemod, on CPU. On a machine with a GPU, `jaxfix bench` "
            "measures each function on it too (one row per device kind), and this script writes a table per device."
        )
    return f"- Devices measured: {', '.join(measured)}: one table per codemod and device."


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="*", help="glob over case ids `<codemod>/<case>` (default: all positive cases)")
    parser.add_argument("--size", type=int, default=300, help="trip count for cases with size_arg (default 300)")
    parser.add_argument("--batch", type=int, default=512, help="rows for cases with batch_args (default 512)")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per function")
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks-corpus.md"))
    parser.add_argument("--save", help="also write the raw results (jaxfix bench's JSON rows and run facts) to this file")
    parser.add_argument("--load", help="render the tables from results saved with --save, without measuring again")
    options = parser.parse_args(argv)

    cases = [
        c for c in corpus.cases() if not c.negative and c.runnable and (fnmatch.fnmatch(c.id, options.cases) or fnmatch.fnmatch(c.codemod, options.cases))
    ]
    targets, by_target, changed = targets_for(cases, options.size, options.batch)
    if options.load:
        saved = json.loads(Path(options.load).read_text(encoding="utf-8"))
        results, facts = saved["results"], saved["facts"]
    else:
        started = time.monotonic()
        load_before = os.getloadavg()[0]
        results = []
        batch_ids = {t.id for t in targets if by_target[t.id].codemod == BATCH_CODEMOD}
        groups = [  # JF301's cases also with the rewrite under jax.jit: the comparison the target is judged on (one worker per group)
            ([t for t in targets if t.id not in batch_ids], BenchOptions(repeats=options.repeats, timeout=options.timeout)),
            ([t for t in targets if t.id in batch_ids], BenchOptions(repeats=options.repeats, timeout=options.timeout, jit_rewrite=True)),
        ]
        for group, bench_options in groups:
            for result in bench_run.run(group, bench_options) if group else ():
                results.append(result)
                print(f"[{len(results)}/{len(targets)}] {result['target']} ({result.get('seconds', 0):.1f} s)", file=sys.stderr)
        jax_version, jaxlib_version, platforms = versions()
        facts = {
            "machine": f"{cpu_model()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; Python {platform.python_version()}",
            "versions": f"JAX {jax_version}, jaxlib {jaxlib_version}; devices: {' '.join(platforms)}",
            "platforms": platforms,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "seconds": round(time.monotonic() - started),
            "options": {"size": options.size, "batch": options.batch, "repeats": options.repeats},
            "load": [round(load_before, 1), round(os.getloadavg()[0], 1)],  # 1-minute load average, start and end
        }
        if options.save:
            Path(options.save).write_text(json.dumps({"facts": facts, "results": results}, indent=1) + "\n", encoding="utf-8")
    by_id = {result["target"]: result for result in results}
    results = [by_id[t.id] for t in targets if t.id in by_id]
    rows = report.rows(results)
    size, batch, repeats = facts["options"]["size"], facts["options"]["batch"], facts["options"]["repeats"]
    lines = [
        "# Benchmarks of the corpus: what each rewrite buys, measured",
        "",
        "<!-- Generated by `python benchmarks/bench_corpus.py`; do not edit by hand. -->",
        "",
        f"Every positive corpus case, original (`before.py`) against jaxfix's rewrite (`after.py`), measured by `jaxfix bench` "
        f"(`jaxfix bench before.py after.py --function ENTRY --size {size} --batch {batch} --repeats {repeats}`, "
        "with `--jit-rewrite` for JF301's cases).",
        "",
        f"- Machine: {facts['machine']}",
        f"- {facts['versions']}",
        f"- Date: {facts['date']}; {len(targets)} cases in {facts['seconds']} s",
        devices_line(facts, rows),
        load_line(facts),
        "",
        "How to read it. Each cell is `original / rewrite (ratio)`, the ratio being original ÷ rewrite: above 1 the "
        "rewrite is better. *mode* `jit`: the entry is a jit-wrapped function, and compile is "
        "`f.lower(*args).compile()` of a freshly imported copy (tracing, lowering and XLA compilation), temp memory "
        "its `compiled.memory_analysis().temp_size_in_bytes`. *mode* `eager`: the entry is a plain Python function, "
        "called as its user calls it (op by op, or calling jitted functions inside): compile is its first call on a "
        "fresh copy minus its run time, and there is no executable to report memory for. `eager†`: the original "
        "cannot run under jit (a Python `while` on a traced value raises TracerBoolConversionError) and was run with "
        "jit disabled, the rewrite as it is written. Run is the median of the timed calls, each waited for with "
        "`block_until_ready`, after an untimed warm-up. Compilations are XLA compilations counted with a "
        "`jax.monitoring` listener: in the first call of a fresh copy, and over all its calls. *input* is the "
        f"arguments benchmarked: case.toml's, with the trip count set to {size} (`steps=`) and the batch "
        f"tiled to {batch} rows (`batch=`) where case.toml says which argument that is. A line "
        f"`{report.JITTED_MARK} rewrite as jax.jit(...)` under an eager JF301 case is the same original against "
        "the rewrite called under `jax.jit` (plain Python int arguments static), measured as a jitted side, as a "
        "user who accepts the rewrite would run it hot.",
        "",
        "## Targets",
        "",
    ]
    lines += targets_check(rows, by_target, changed, size, batch)
    by_codemod: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_codemod.setdefault(by_target[row["target"]].codemod, []).append(row)
    for codemod in sorted(by_codemod, key=code_of):
        lines += ["", f"## {code_of(codemod)} `{codemod}`", ""]
        lines += table(by_codemod[codemod], by_target, changed)
    Path(options.out).parent.mkdir(parents=True, exist_ok=True)
    Path(options.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {options.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
