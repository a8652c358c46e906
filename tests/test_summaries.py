"""The library call summaries (`libraries.CALL_SUMMARIES`, `FRESH_INIT_OPTIMIZERS`) against the installed optax,
and JF501 reading them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
import pytest

from jaxfix.analysis import libraries
from jaxfix.analysis.summaries import TRAINING_CALLS, TRAINING_METHODS
from jaxfix.codemods.donate_argnums import DonateArgnums
from tests.helpers import findings

_ARGUMENTS = {"optax.clip": (1.0,), "optax.clip_by_global_norm": (1.0,)}


def _leaf_buffers(tree) -> set[int]:
    return {leaf.unsafe_buffer_pointer() for leaf in jax.tree.leaves(tree) if isinstance(leaf, jax.Array)}


@pytest.mark.parametrize("name", sorted(libraries.FRESH_INIT_OPTIMIZERS))
def test_fresh_init_optimizers_make_new_arrays(name: str) -> None:
    constructor = getattr(optax, name.split(".", 1)[1])
    optimizer = constructor(*_ARGUMENTS.get(name, (1e-3,)))
    params = {"w": jnp.ones((3, 2)), "b": jnp.zeros((2,))}
    state = optimizer.init(params)
    assert not _leaf_buffers(state) & _leaf_buffers(params)


def test_an_init_left_out_keeps_the_parameters() -> None:
    """Why the list is needed: Prodigy's state holds `params` itself (`params0 = params`)."""
    params = {"w": jnp.ones((3, 2))}
    state = optax.contrib.prodigy(1.0).init(params)
    assert _leaf_buffers(state) & _leaf_buffers(params)


def test_apply_updates_makes_new_arrays_like_params() -> None:
    params = {"w": jnp.ones((3, 2), jnp.bfloat16)}
    new = optax.apply_updates(params, {"w": jnp.full((3, 2), 0.5)})
    assert jax.tree.map(lambda a: (a.shape, a.dtype), new) == jax.tree.map(lambda a: (a.shape, a.dtype), params)
    assert not _leaf_buffers(new) & _leaf_buffers(params)
    summary = libraries.CALL_SUMMARIES["optax.apply_updates"]
    assert summary.returns == ("params",) and summary.aliases == ()


def test_training_marks_come_from_the_table() -> None:
    assert {"optax.apply_updates", "equinox.apply_updates", "flax.nnx.grad", "jax.value_and_grad"} <= TRAINING_CALLS
    assert TRAINING_METHODS == {"apply_gradients"}


_LOOP = """
import jax
import jax.numpy as jnp
import optax

optimizer = {optimizer}


def loss_fn(params, x):
    return jnp.sum((params["w"] * x - 1.0) ** 2)


@jax.jit
def _step(params, opt_state, x):
    grads = jax.grad(loss_fn)(params, x)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state


def train(x):
    params = {{"w": jnp.zeros_like(x)}}
    opt_state = optimizer.init(params)
    for _ in range(3):
        params, opt_state = _step(params, opt_state, x)
    return params
"""


@pytest.mark.parametrize(
    ("optimizer", "donated"),
    [
        ("optax.adam(1e-2)", "donate_argnums=(0, 1)"),
        ("optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(1e-2))", "donate_argnums=(0, 1)"),
        ("optax.contrib.prodigy(1.0)", "donate_argnums=1"),  # its init keeps `params`
        ("make_optimizer()", "donate_argnums=1"),  # nothing tells what its init returns
    ],
)
def test_init_of_a_known_optimizer_does_not_keep_params(optimizer: str, donated: str) -> None:
    (finding,) = findings(_LOOP.format(optimizer=optimizer), DonateArgnums)
    assert f"`{donated}`" in finding.message
