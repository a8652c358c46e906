"""The library call summaries (`libraries.CALL_SUMMARIES`, `FRESH_INIT_OPTIMIZERS`) against the installed optax,
and JF501 reading them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxfix.analysis import libraries
from jaxfix.analysis.summaries import TRAINING_CALLS, TRAINING_METHODS
from jaxfix.codemods.donate_argnums import DonateArgnums
from tests.helpers import findings, rewrite

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
        ("make_optimizer()", "donate_argnums=1"),  # nothing tells what its init returns
    ],
)
def test_init_of_a_known_optimizer_does_not_keep_params(optimizer: str, donated: str) -> None:
    (finding,) = findings(_LOOP.format(optimizer=optimizer), DonateArgnums)
    assert f"`{donated}`" in finding.message


def test_an_init_not_known_to_be_fresh_says_the_first_call_may_raise() -> None:
    (finding,) = findings(_LOOP.format(optimizer="make_optimizer()"), DonateArgnums)
    assert finding.fix is not None and finding.fix.safety.value == "unsafe"
    assert "may hold the arrays of `params`" in finding.message and "Attempt to donate a buffer" in finding.message


_KEEPING_ARGUMENTS = {
    "optax.contrib.madgrad": (1e-3,),
    "optax.contrib.scale_by_madgrad": (1e-3,),
    "optax.contrib.mechanize": (optax.sgd(0.1),),
    "optax.contrib.sam": (optax.sgd(0.1), optax.sgd(0.1)),
}


@pytest.mark.parametrize("name", sorted(libraries.PARAMS_KEEPING_OPTIMIZERS))
def test_params_keeping_optimizers_keep_the_parameters(name: str) -> None:
    module, attribute = name.rsplit(".", 1)
    constructor = getattr(optax.contrib if module == "optax.contrib" else optax, attribute)
    params = {"w": jnp.ones((3, 2)), "b": jnp.zeros((2,))}
    assert _leaf_buffers(constructor(*_KEEPING_ARGUMENTS.get(name, ())).init(params)) & _leaf_buffers(params)


def _train(source: str):
    namespace: dict = {}
    exec(compile(source, "<jf501>", "exec"), namespace)
    return namespace["train"](jnp.arange(1.0, 5.0))


@pytest.mark.parametrize(
    "optimizer", ["optax.contrib.prodigy(1.0)", "optax.chain(optax.clip(1.0), optax.contrib.dog())"]
)
def test_a_state_holding_params_blocks_the_donation_that_would_raise(optimizer: str) -> None:
    """Prodigy's and DoG's state hold `params` itself: a step that receives both cannot donate either (XLA
    refuses a donated buffer the call also uses). The fix jaxfix made before (`donate_argnums=1`) raised on the
    first call; now it reports without a fix, and the way out it names donates both and computes the same."""
    source = _LOOP.format(optimizer=optimizer)
    old_fix = "import functools\n" + source.replace("@jax.jit\n", "@functools.partial(jax.jit, donate_argnums=1)\n")
    with pytest.raises(Exception, match="Attempt to donate a buffer which is also used by the same call"):
        _train(old_fix)
    (finding,) = findings(source, DonateArgnums)
    assert finding.fix is None and "donating either raises on the first call" in finding.message
    way_out = "opt_state = jax.tree.map(jnp.copy, optimizer.init(params))"
    assert f"`{way_out}`" in finding.message
    copied = source.replace("opt_state = optimizer.init(params)", way_out)
    fixed = rewrite(copied, DonateArgnums, unsafe=True)
    assert "donate_argnums=(0, 1)" in fixed
    expected = _train(source)
    np.testing.assert_array_equal(_train(fixed)["w"], expected["w"])
