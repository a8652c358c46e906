"""The verification report as text: one line per function and device, a counterexample under each difference,
and a summary.

    corpus/x/before.py::decay  cpu  verified  11 examples (case.toml), max abs error 0, max rel error 0
    m.py::f  cpu  differs: leaf 0: at [0]: 0.998 != 0.988 (abs error 0.01, tolerance 0.0002)
        x: float32[3] [1, 1, 1]
        n: 1
        original output: float32[3] [0.998, 0.998, 0.998]
        rewrite output: float32[3] [0.988, 0.988, 0.988]
    m.py::g  unverified: no source of inputs: no annotation for x; ...
"""

from __future__ import annotations

from typing import Sequence

from jaxfix.verify.targets import DIFFERS, UNVERIFIED, VERIFIED, DeviceReport, Report


def lines(report: Report) -> list[str]:
    if not report.devices:
        if report.through:
            return [f"{report.target}  verified through {', '.join(report.through)} (no inputs of its own)"]
        return [f"{report.target}  unverified: {report.reason or 'nothing was run'}"]
    out = []
    for device in report.devices:
        out.append(f"{report.target}  {device.device}  {_device_status(device, report.origin)}")
        if device.status == DIFFERS:
            out += ["    " + line for line in device.counterexample]
        out += ["    note: " + note for note in device.notes]
    return out


def _device_status(device: DeviceReport, origin: str) -> str:
    if device.status == VERIFIED and device.tests:
        cases = "1 test case passes" if device.tests == 1 else f"{device.tests} test cases pass"
        return f"verified  {cases} after the rewrite ({origin})"
    if device.status == VERIFIED:
        text = f"verified  {device.examples} example{'s' if device.examples != 1 else ''} ({origin})"
        text += f", max abs error {device.max_abs_error:.3g}, max rel error {device.max_rel_error:.3g}"
        if device.both_raised:
            text += f"; {device.both_raised} more on which both raised the same exception"
        if device.grad_checked:
            text += f"; gradients compared on {device.grad_checked}"
        return text
    if device.status == DIFFERS:
        return f"differs: {device.reason}"
    return f"unverified: {device.reason}"


def summary(reports: Sequence[Report]) -> str:
    counts = {VERIFIED: 0, DIFFERS: 0, UNVERIFIED: 0}
    for report in reports:
        counts[report.status] += 1
    devices = sorted({f"{d.device} ({d.device_kind})" if d.device_kind and d.device_kind != d.device else d.device for r in reports for d in r.devices})
    total = len(reports)
    text = f"Verified {counts[VERIFIED]} of {total} function{'s' if total != 1 else ''}"
    text += f": {counts[DIFFERS]} differ, {counts[UNVERIFIED]} unverified"
    if devices:
        text += f"; devices: {', '.join(devices)}"
    return text + "."
