"""False alarms found by benchmarks/real_code.py on real libraries, reduced: each must stay quiet."""

from __future__ import annotations

from jaxfix import registry
from jaxfix.engine import analyse

ALL = registry.all_codemods()

# brax/positional/joints.py: `limit` is a tuple of arrays (or None) vmapped as a pytree; `if limit:` tests the
# tuple, never an array, so it cannot raise TracerBoolConversionError (JF201 reported it).
BRAX_TUPLE_OF_ARRAYS = """\
from typing import Tuple

import jax
import jax.numpy as jp


def update(x: jax.Array, limit: Tuple[jax.Array, jax.Array]) -> jax.Array:
    if limit:
        x = jp.clip(x, limit[0], limit[1])
    return x


def run(xs, limits):
    return jax.vmap(update)(xs, limits)
"""


def test_truth_of_a_tuple_of_arrays_is_static() -> None:
    diagnostics, errors, _ = analyse(BRAX_TUPLE_OF_ARRAYS, ALL)
    assert errors == []
    assert [d.code for d in diagnostics] == []


def test_a_single_annotated_array_is_still_traced() -> None:
    """The same code with `limit: jax.Array` must still be reported: the change is about containers only."""
    text = BRAX_TUPLE_OF_ARRAYS.replace("limit: Tuple[jax.Array, jax.Array]", "limit: jax.Array")
    diagnostics, _, _ = analyse(text, ALL)
    assert any(d.code.startswith("JF20") for d in diagnostics)
