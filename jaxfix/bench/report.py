"""What `jaxfix bench` prints: rows (one per function and device) with the ratios, as JSON or a text table (the
progress bar is jaxfix/report/progress.py's). A ratio is original ÷ rewrite, so above 1 the rewrite is better
(faster, fewer compilations, less memory) and below 1 it is worse."""

from __future__ import annotations

from typing import Any, Iterable

SIDE_KEYS = ("compile_s", "run_s", "compiles", "temp_bytes")
RATIOS = {"compile": "compile_s", "run": "run_s", "compiles": "compiles", "temp_bytes": "temp_bytes"}
JITTED_MARK = "↳"  # the table's line for the rewrite under jax.jit (--jit-rewrite)


def ratio(before: Any, after: Any) -> float | None:
    """before ÷ after; None when either is unknown, or the rewrite's is 0 and the original's is not (JSON has no
    infinity). 0 ÷ 0 is 1: no change."""
    if before is None or after is None:
        return None
    if after == 0:
        return 1.0 if before == 0 else None
    return before / after


def rows(results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The JSON rows: {"function", "device", "before": {compile_s, run_s, compiles, temp_bytes, ...}, "after",
    "ratios", ...}, one per function and device; a function that could not be measured has one row with
    device None and the reason. Measured with --jit-rewrite, a row also has "after_jit" (the rewrite under
    jax.jit; None where the rewrite is jit-wrapped already, so that `after` is that, or failed) and
    "ratios_jit" (original ÷ that)."""
    found = []
    for result in results:
        common = {"function": result["function"], "path": result.get("path", ""), "target": result["target"]}
        if not result.get("rows"):
            found.append({**common, "device": None, "before": None, "after": None, "ratios": None, "reason": result.get("reason") or "not measured"})
            continue
        for row in result["rows"]:
            before, after = row["before"], row["after"]
            found.append(
                {
                    **common,
                    "device": row["device"],
                    "device_kind": row.get("device_kind", ""),
                    "mode": row["mode"],
                    "input": result.get("input", ""),
                    "origin": result.get("origin", ""),
                    "before": before,
                    "after": after,
                    "ratios": ratios(before, after),
                }
            )
            if "after_jit" in row:
                jitted = row["after_jit"]
                found[-1]["after_jit"] = jitted
                found[-1]["ratios_jit"] = ratios(before, jitted) if jitted and not jitted.get("error") else None
    return found


def ratios(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float | None]:
    return {name: rounded_ratio(before.get(key), after.get(key)) for name, key in RATIOS.items()}


def rounded_ratio(before: Any, after: Any) -> float | None:
    """`ratio` to 4 significant digits, as the rows carry it: a table cell shows what the row says."""
    return _rounded(ratio(before, after))


def _rounded(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.4g}")


# ---- text -------------------------------------------------------------------------------------------------


def seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} µs"


def size(value: int | None) -> str:
    if value is None:
        return "-"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value} B"


def times(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}x" if value < 100 else f"{value:.0f}x"


def _cell(before: dict, after: dict, key: str, show) -> str:
    if before.get("error") or after.get("error"):
        return f"{show(before.get(key)) if not before.get('error') else 'error'} -> {show(after.get(key)) if not after.get('error') else 'error'}"
    return f"{show(before.get(key))} -> {show(after.get(key))} ({times(ratio(before.get(key), after.get(key)))})"


def table(found: list[dict[str, Any]]) -> list[str]:
    """A text table: one line per function and device, `original -> rewrite (ratio)` per measure, then the
    reasons and errors."""
    header = ("function", "device", "mode", "compile", "run", "compiles", "temp memory")
    lines: list[list[str]] = []
    notes: list[str] = []
    for row in found:
        if row["device"] is None:
            notes.append(f"{row['target']}: not measured: {row['reason']}")
            continue
        before, after = row["before"], row["after"]
        device = row["device"] + (f" ({row['device_kind']})" if row.get("device_kind") and row["device_kind"] != row["device"] else "")
        lines.append(
            [
                row["target"],
                device,
                row["mode"].split(":")[0] + ("*" if ":" in row["mode"] else ""),
                _cell(before, after, "compile_s", seconds),
                _cell(before, after, "run_s", seconds),
                _cell(before, after, "compiles", lambda v: "-" if v is None else str(v)),
                _cell(before, after, "temp_bytes", size),
            ]
        )
        jitted = row.get("after_jit")
        if jitted:  # --jit-rewrite: the original against the rewrite under jax.jit, on the next line
            lines.append(
                [
                    f"  {JITTED_MARK} {jitted.get('run_as', 'jax.jit(rewrite)')}",
                    "",
                    "jit",
                    _cell(before, jitted, "compile_s", seconds),
                    _cell(before, jitted, "run_s", seconds),
                    _cell(before, jitted, "compiles", lambda v: "-" if v is None else str(v)),
                    _cell(before, jitted, "temp_bytes", size),
                ]
            )
        for label, side in (("original", before), ("rewrite", after), ("rewrite under jax.jit", jitted or {})):
            if side.get("error"):
                notes.append(f"{row['target']} ({row['device']}): the {label}: {side['error']}")
        if ":" in row["mode"]:
            notes.append(f"{row['target']}: * {row['mode']} ({before.get('rejected', '')}): it was run with jit disabled")
    out = []
    if lines:
        widths = [max(len(str(cell)) for cell in column) for column in zip(header, *lines)]
        for cells in [list(header), *lines]:
            out.append("  ".join(str(cell).ljust(width) for cell, width in zip(cells, widths)).rstrip())
    return out + notes


def measured(row: dict[str, Any]) -> bool:
    """Whether a row holds numbers for both sides: a side that raised measured nothing."""
    return row["device"] is not None and all(side and not side.get("error") for side in (row["before"], row["after"]))


def summary(found: list[dict[str, Any]], calls: int) -> str:
    done = {row["target"] for row in found if measured(row)}
    missing = {row["target"] for row in found} - done
    devices = sorted({row["device"] for row in found if row["device"] is not None})
    text = f"Measured {len(done)} function{'s' if len(done) != 1 else ''}"
    if missing:
        text += f" ({len(missing)} not measured)"
    text += f" on {', '.join(devices) or 'no device'}; "
    text += f"ratios are original / rewrite (above 1: the rewrite is better); run = median of {calls} calls."
    if any(row.get("after_jit") for row in found):
        text += f" {JITTED_MARK} lines: the original against the rewrite called under jax.jit (--jit-rewrite)."
    return text
