"""A test method checked by running it, in the worker: a test method takes no inputs (its instance is built by its
framework) and returns nothing, so what it computes is whether its test passes. Its test cases are run as the
framework runs them, on the original module and on the rewrite: unittest, absltest and parameterized classes (a
`unittest.TestCase` subclass) through a `unittest.TestSuite` of the class's test cases (class fixtures, setUp
and tearDown included; each parameterized case is one test case); any other test class as pytest does, an
instance made without arguments, `setup_method`/`teardown_method` around each call, one call per
`pytest.mark.parametrize` row. A test that takes pytest fixtures cannot be run this way, and says so.

For a method named `test*`, its own test cases (the ones parameterized generates from it too); for any other
method (setUp, a helper), every test case of its class.
"""

from __future__ import annotations

import inspect
import itertools
import sys
import unittest
from typing import Any

PASSED, SKIPPED = "passes", "skipped"


class NotRunnable(Exception):
    """The class's tests cannot be run outside their framework (fixtures); the message says why."""


def outcomes(module: Any, name: str) -> dict[str, str]:
    """{test case id: "passes" | "skipped" | "fails: ..."} for the test method `name` ("Class.method") of `module`.
    Raises NotRunnable, or LookupError when the module has no such class."""
    class_name, _, method = name.partition(".")
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        raise LookupError(f"the module defines no class '{class_name}'")
    _parse_absl_flags()
    if issubclass(cls, unittest.TestCase):
        return _unittest(cls, method)
    return _pytest_class(cls, method)


def _own(cls: type, names: list[str], method: str) -> list[str]:
    """The test cases `method` stands for: itself and those generated from it, or all for a non-test method."""
    if not method.startswith("test"):
        return names
    chosen = []
    for attribute in names:
        function = getattr(cls, attribute, None)
        code = getattr(inspect.unwrap(function), "__code__", None) if function is not None else None
        if attribute == method or (code is not None and code.co_name == method):
            chosen.append(attribute)
    return chosen


def _unittest(cls: type, method: str) -> dict[str, str]:
    names = _own(cls, list(unittest.TestLoader().getTestCaseNames(cls)), method)
    found = {name: PASSED for name in names}
    if not names:
        return found
    result = _Result()
    unittest.TestSuite([cls(name) for name in names]).run(result)
    for test, failed in result.failed:
        case = getattr(test, "_testMethodName", None)
        if case in found:
            found[case] = failed
        else:  # setUpClass or a module fixture: every case fails with it
            found = {name: failed for name in found}
    for test, _ in result.skipped:
        found[getattr(test, "_testMethodName", "")] = SKIPPED
    for test in result.unexpectedSuccesses:
        found[getattr(test, "_testMethodName", "")] = "fails: an unexpected success (marked expectedFailure)"
    return {name: outcome for name, outcome in found.items() if name}


class _Result(unittest.TestResult):
    """A TestResult that keeps each failure as "fails: Type: first line of its message"."""

    def __init__(self) -> None:
        super().__init__()
        self.failed: list[tuple[Any, str]] = []

    def addFailure(self, test, err) -> None:  # noqa: N802 - unittest's names
        super().addFailure(test, err)
        self.failed.append((test, _failure(err[1])))

    def addError(self, test, err) -> None:  # noqa: N802
        super().addError(test, err)
        self.failed.append((test, _failure(err[1])))

    def addSubTest(self, test, subtest, err) -> None:  # noqa: N802
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.failed.append((test, _failure(err[1])))


def _failure(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return f"fails: {type(error).__name__}" + (f": {lines[0]}" if lines else "")


def _pytest_class(cls: type, method: str) -> dict[str, str]:
    names = _own(cls, [n for n in dir(cls) if n.startswith("test") and callable(getattr(cls, n, None))], method)
    found: dict[str, str] = {}
    for name in names:
        function = getattr(cls, name)
        for label, kwargs in _parameter_rows(function, name):
            found[label] = _call_pytest_case(cls, name, kwargs)
    return found


def _parameter_rows(function: Any, name: str) -> list[tuple[str, dict[str, Any]]]:
    """One (label, keyword arguments) per `pytest.mark.parametrize` row (their product, as pytest stacks them)."""
    tables = []
    for mark in getattr(function, "pytestmark", []) or []:
        if getattr(mark, "name", "") != "parametrize" or len(mark.args) < 2:
            continue
        argnames, argvalues = mark.args[0], mark.args[1]
        names = [n.strip() for n in argnames.split(",") if n.strip()] if isinstance(argnames, str) else list(argnames)
        rows = []
        for value in argvalues:
            if hasattr(value, "values") and hasattr(value, "marks"):  # pytest.param(...)
                values = tuple(value.values)
            else:
                values = (value,) if len(names) == 1 else tuple(value)
            rows.append(dict(zip(names, values)))
        tables.append(rows)
    try:
        parameters = list(inspect.signature(function).parameters.values())[1:]  # after self
    except (TypeError, ValueError):
        parameters = []
    given = {n for rows in tables for row in rows[:1] for n in row}
    fixtures = [p.name for p in parameters if p.name not in given and p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if fixtures:
        raise NotRunnable(f"{name} takes pytest fixtures ({', '.join(fixtures)}): only pytest can run it")
    combined = []
    for index, rows in enumerate(itertools.product(*tables) if tables else [()]):
        kwargs = {k: v for row in rows for k, v in row.items()}
        combined.append((f"{name}[{index}]" if tables else name, kwargs))
    return combined


def _call_pytest_case(cls: type, name: str, kwargs: dict[str, Any]) -> str:
    try:
        instance = cls()
    except Exception as error:
        raise NotRunnable(f"{cls.__name__}() raises {type(error).__name__}: pytest classes are made without arguments") from None
    try:
        if hasattr(instance, "setup_method"):
            instance.setup_method(getattr(instance, name))
        try:
            getattr(instance, name)(**kwargs)
        finally:
            if hasattr(instance, "teardown_method"):
                instance.teardown_method(getattr(instance, name))
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # pytest.skip and pytest.fail raise BaseExceptions of their own
        if type(error).__name__ == "Skipped":
            return SKIPPED
        return _failure(error)
    return PASSED


def _parse_absl_flags() -> None:
    """absltest reads its flags (test_tmpdir, ...) as absltest.main would have parsed them: their defaults."""
    flags = sys.modules.get("absl.flags")
    if flags is not None and not flags.FLAGS.is_parsed():
        flags.FLAGS(["jaxfix-verify"], known_only=True)

