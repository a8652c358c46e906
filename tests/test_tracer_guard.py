"""Code written to run both under tracing and eagerly (a Python test inside `try: ... except
jax.errors.ConcretizationTypeError`, as Haiku's dropout has) is not reported by the branch rules."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import codemod_for_module, findings

GUARDED = textwrap.dedent(
    """
    import jax


    @jax.jit
    def f(rate, x):
        try:
            if rate < 0:
                raise ValueError("rate must be positive")
            if rate == 0.0:
                return x
        except {caught}:
            pass
        return x * rate
    """
)


@pytest.mark.parametrize("caught", ["jax.errors.ConcretizationTypeError", "jax.errors.TracerBoolConversionError",
                                    "(ValueError, jax.errors.ConcretizationTypeError)", "Exception"])
def test_guarded_tests_stay_quiet(caught) -> None:
    assert findings(GUARDED.format(caught=caught), codemod_for_module("branch_to_cond")) == []


def test_a_handler_for_other_errors_does_not_guard() -> None:
    assert len(findings(GUARDED.format(caught="KeyError"), codemod_for_module("branch_to_cond"))) == 2
