"""What the jaxfix process asks of the verification worker, and what comes back. Plain data, sent as JSON over a
pipe: the worker is another process, since verification runs user code and nothing else in jaxfix may.

A Target is one function to compare: its name, the original and rewritten module (path and text), and the
sources of inputs found for it, best first (see inputs.py). A Report is the answer per device.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

VERIFIED, DIFFERS, UNVERIFIED = "verified", "differs", "unverified"


@dataclass(frozen=True)
class Options:
    seed: int = 0
    max_examples: int = 50
    grad: bool = True  # compare gradients where there are float inputs (--no-grad: skip)
    timeout: float = 120.0  # seconds for one function, all devices; the worker is killed past it
    magnitude: float = 10.0  # bound on |value| of floats drawn from annotations (examples set their own scale)
    nan: bool = True  # mix NaN and infinities into some float inputs (False: finite floats only)
    deadline: float = 5.0  # seconds one call may run, not counting JAX's compile time

    @property
    def budget(self) -> float:
        """Seconds of examples per function and device; past it no more inputs are run (the deadline that keeps a
        slow function within its timeout, with time left to shrink a failure and for other devices)."""
        return self.timeout / 4


@dataclass(frozen=True)
class Module:
    path: str  # where the module lives (relative imports, the package root); the text may differ from the file
    text: str
    label: str = ""  # how tracebacks and reports name it: the path, or "<path (rewritten)>"


@dataclass(frozen=True)
class Source:
    """One way of making inputs.

    kind "examples": `calls` are concrete calls, each {"args": [expr, ...], "kwargs": {name: expr}}, evaluated
      in a namespace made by running `imports` (import statements); values are drawn like them: same pytree
      structure, shapes and dtypes, array values varied, Python ints between 0 and the example's value.
    kind "tests": a method of a test class, checked by running it as its framework does (unittest's TestSuite,
      or a pytest class instantiated without arguments): it verifies when its test cases pass after the rewrite
      and none that passed before fails.
    kind "specs": `params` maps each parameter to a spec (see strategies.py): arrays with named dimensions,
      float, int, bool, key, a fixed value, or "default" (leave the argument out).
    `expected`/`original_raises` (case.toml): the original raises this exception type, and the rewrite must give
    this value on the first call.
    """

    kind: str
    origin: str  # for the report: "case.toml", "annotations", "call site tests/test_m.py:12", ...
    calls: tuple[dict[str, Any], ...] = ()
    imports: tuple[str, ...] = ()
    params: tuple[tuple[str, dict[str, Any]], ...] = ()  # (name, spec) in signature order
    positional: int = 0  # with "specs": how many of `params` are passed positionally (the rest by keyword)
    expected: str | None = None
    original_raises: str | None = None
    rtol: float | None = None
    atol: float | None = None
    no_grad: str | None = None  # case.toml: why the gradients are not compared (the fix's documented loss)
    no_nan: str | None = None  # case.toml: why only finite floats are drawn (the fix's documented NaN difference)
    constants: tuple[float, ...] = ()  # numbers the original compares against: drawn, with their neighbours


@dataclass(frozen=True)
class Target:
    id: str  # how the report names it: "path::name"
    name: str  # qualified name in the module ("f", "C.m")
    before: Module
    after: Module
    sources: tuple[Source, ...] = ()
    missing: str = ""  # when `sources` is empty: why no input could be made
    changed: bool = True  # its own code changed (False: verified only because it calls a changed function)
    kind: str = "function"  # for messages: "method", "test method", "notebook variable (cell 4)"... (functions.kind)


@dataclass
class DeviceReport:
    device: str  # "cpu", "gpu", ... (platform), with the device kind in `device_kind`
    device_kind: str = ""
    status: str = UNVERIFIED
    reason: str = ""  # unverified: why; differs: the one-line difference
    examples: int = 0  # inputs on which both returned and were compared
    both_raised: int = 0  # inputs on which both raised the same exception type (agreement, but not a comparison)
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    counterexample: list[str] = field(default_factory=list)  # lines: arguments, then both outputs
    grad_checked: int = 0  # inputs whose gradients were compared (--grad)
    tests: int = 0  # a test method checked by running it (Source kind "tests"): its test cases that passed
    notes: list[str] = field(default_factory=list)


@dataclass
class Report:
    target: str  # Target.id
    name: str
    origin: str = ""  # the input source used
    devices: list[DeviceReport] = field(default_factory=list)
    reason: str = ""  # set when no device ran (no inputs, the module failed to load, timed out)
    seconds: float = 0.0
    through: list[str] = field(default_factory=list)  # no inputs of its own, but these verified callers run it
    no_inputs: bool = False  # unverified because no source of inputs was found

    @property
    def status(self) -> str:
        if not self.devices:
            return VERIFIED if self.through else UNVERIFIED
        states = {d.status for d in self.devices}
        if DIFFERS in states:
            return DIFFERS
        return VERIFIED if states == {VERIFIED} else UNVERIFIED


def to_json(value: Any) -> Any:
    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value


def options_from(data: dict[str, Any]) -> Options:
    return Options(**data)


def module_from(data: dict[str, Any]) -> Module:
    return Module(**data)


def source_from(data: dict[str, Any]) -> Source:
    data = dict(data)
    data["calls"] = tuple(data.get("calls", ()))
    data["imports"] = tuple(data.get("imports", ()))
    data["params"] = tuple((name, spec) for name, spec in data.get("params", ()))
    data["constants"] = tuple(data.get("constants", ()))
    return Source(**data)


def target_from(data: dict[str, Any]) -> Target:
    return Target(
        id=data["id"],
        name=data["name"],
        before=module_from(data["before"]),
        after=module_from(data["after"]),
        sources=tuple(source_from(s) for s in data.get("sources", ())),
        missing=data.get("missing", ""),
        changed=data.get("changed", True),
        kind=data.get("kind", "function"),
    )


def report_from(data: dict[str, Any]) -> Report:
    devices = [DeviceReport(**d) for d in data.get("devices", [])]
    return Report(**{**data, "devices": devices})
