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


# dm-haiku's examples/imagenet/train.py: a pmap step whose helpers call the builtin `sum` crashed JF803 (the
# name's only binding is a builtin, with no node to read).
HAIKU_BUILTIN_SUM = '''
import functools

import jax
import jax.numpy as jnp


def l2_loss(params):
    return 0.5 * sum(jnp.sum(jnp.square(p)) for p in params)


@functools.partial(jax.pmap, axis_name="i")
def train_step(params, x):
    grads = jax.grad(lambda p: l2_loss(p) + jnp.sum(x))(params)
    grads = jax.lax.pmean(grads, axis_name="i")
    total = sum(jnp.sum(g) for g in grads)
    return [p - 0.1 * g for p, g in zip(params, grads)], total
'''


def test_a_builtin_called_in_a_pmap_step_is_not_a_crash() -> None:
    diagnostics, errors, _ = analyse(HAIKU_BUILTIN_SUM, ALL)
    assert errors == []
    assert [d.code for d in diagnostics if d.code == "JF803"] == []  # pmean is there
