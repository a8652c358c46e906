"""The library call summaries (jaxfix/facts/knowledge/: `CALL_SUMMARIES`, optax's `FRESH_INIT_OPTIMIZERS`)
against the installed optax, and JF501 reading them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxfix.facts.summaries import TRAINING_CALLS, TRAINING_METHODS
from jaxfix.codemods.donate_argnums import DonateArgnums
from jaxfix.facts.knowledge import optax as optax_knowledge, tables
from tests.helpers import findings, rewrite

_ARGUMENTS = {"optax.clip": (1.0,), "optax.clip_by_global_norm": (1.0,)}


def _leaf_buffers(tree) -> set[int]:
    return {leaf.unsafe_buffer_pointer() for leaf in jax.tree.leaves(tree) if isinstance(leaf, jax.Array)}


@pytest.mark.parametrize("name", sorted(optax_knowledge.FRESH_INIT_OPTIMIZERS))
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
    summary = tables.CALL_SUMMARIES["optax.apply_updates"]
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


@pytest.mark.parametrize("name", sorted(optax_knowledge.PARAMS_KEEPING_OPTIMIZERS))
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


def test_init_of_an_optimizer_made_in_place() -> None:
    """`optax.sgd(1e-2).init(params)`: the receiver is the constructor call itself."""
    source = _LOOP.format(optimizer="make_optimizer()")
    (finding,) = findings(source, DonateArgnums)
    assert "`donate_argnums=1`" in finding.message
    in_place = source.replace("opt_state = optimizer.init(params)", "opt_state = optax.sgd(1e-2).init(params)")
    (finding,) = findings(in_place, DonateArgnums)
    assert "`donate_argnums=(0, 1)`" in finding.message, finding.message


# ---- Haiku: what `hk.transform(f).init/apply` return ----------------------------------------------------------


def test_summaries_name_their_own_parameters() -> None:
    """Every aliased parameter is one the summary has; per-output aliases add up to the whole result's; every type
    a constructor makes has summaries for its named-tuple fields."""
    for name, summary in tables.CALL_SUMMARIES.items():
        assert set(summary.aliases) <= set(summary.parameters), name
        if summary.by_output:
            assert len(summary.by_output) == len(summary.returns), name
            assert set().union(*summary.by_output) == set(summary.aliases), name
    for made, fields in tables.TYPE_FIELDS.items():
        assert made in tables.CONSTRUCTED_TYPES.values()
        assert all(f"{made}.{field}" in tables.CALL_SUMMARIES for field in fields)


def test_haiku_summaries_against_haiku() -> None:
    """What the Haiku summaries claim, on Haiku itself: `init` makes new parameters, `apply` new outputs (the
    forward computes them), `transform_with_state`'s `apply` hands back the state entries it did not set as they
    were, and its `init` state holds what `hk.set_state` was given."""
    hk = pytest.importorskip("haiku")

    def forward(x):
        return hk.Linear(3)(x)

    x = jnp.ones((2, 4))
    net = hk.without_apply_rng(hk.transform(forward))
    params = net.init(jax.random.PRNGKey(0), x)
    assert not _leaf_buffers(params) & _leaf_buffers(x)
    assert not _leaf_buffers(net.apply(params, x)) & _leaf_buffers(params)

    def stateful(x):
        count = hk.get_state("count", [], init=jnp.zeros)
        hk.get_state("seen", [], init=jnp.zeros)  # read, never set
        hk.set_state("count", count + 1)
        hk.set_state("last", x)
        return x.sum()

    forward_with_state = hk.transform_with_state(stateful)
    params, state = forward_with_state.init(None, x)
    assert state["~"]["last"] is x  # the state holds an argument: not fresh
    _, new_state = forward_with_state.apply(params, state, None, x)
    assert new_state["~"]["seen"] is state["~"]["seen"]  # the old state's array: aliased
    assert new_state["~"]["count"] is not state["~"]["count"]


_HAIKU = """
import haiku as hk
import jax
import jax.numpy as jnp
import optax

{network}
optimizer = optax.sgd(1e-2)


@jax.jit
def _step(params, opt_state, x, y):
    grads = jax.grad(lambda p: jnp.mean(({apply} - y) ** 2))(params)
    updates, opt_state = optimizer.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state


def train(x, y):
    params = {init}
    opt_state = optimizer.init(params)
    for _ in range(3):
        params, opt_state = _step(params, opt_state, x, y)
        print({apply})
    return params
"""
_LINEAR = "lambda x: hk.Linear(1)(x)"


@pytest.mark.parametrize(
    ("network", "init", "apply", "donated"),
    [
        (f"net = hk.transform({_LINEAR})", "net.init(jax.random.PRNGKey(0), x)", "net.apply(params, None, x)",
         "donate_argnums=(0, 1)"),
        (f"net = hk.without_apply_rng(hk.transform({_LINEAR}))", "net.init(None, x)", "net.apply(params, x)",
         "donate_argnums=(0, 1)"),
        (f"init_fn, apply_fn = hk.transform({_LINEAR})", "init_fn(None, x)", "apply_fn(params, None, x)",
         "donate_argnums=(0, 1)"),
        ("@hk.without_apply_rng\n@hk.transform\ndef net(x):\n    return hk.Linear(1)(x)\n", "net.init(None, x)",
         "net.apply(params, x)", "donate_argnums=(0, 1)"),
        (f"net = hk.transform({_LINEAR})", f"hk.transform({_LINEAR}).init(None, x)", "net.apply(params, None, x)",
         "donate_argnums=(0, 1)"),
        # Not Haiku: nothing tells what `init` and `apply` return.
        (f"net = make_network({_LINEAR})", "net.init(None, x)", "net.apply(params, x)", "donate_argnums=1"),
        # Rebound: which one `net` is at the call cannot be told.
        (f"net = hk.transform({_LINEAR})\nnet = wrap(net)", "net.init(None, x)", "net.apply(params, None, x)",
         "donate_argnums=1"),
    ],
)
def test_haiku_init_and_apply_make_new_arrays(network: str, init: str, apply: str, donated: str) -> None:
    source = _HAIKU.format(network=network, init=init, apply=apply)
    (finding,) = findings(source, DonateArgnums)
    assert f"`{donated}`" in finding.message, finding.message


_HAIKU_STATE = """
import haiku as hk
import jax
import jax.numpy as jnp
import optax

forward = hk.transform_with_state(lambda x: hk.nets.MLP([4, 1])(x))
optimizer = optax.sgd(1e-2)


def loss_fn(params, state, x, y):
    out, state = forward.apply(params, state, None, x)
    return jnp.mean((out - y) ** 2), state


@jax.jit
def _step(params, state, opt_state, x, y):
    grads, state = jax.grad(loss_fn, has_aux=True)(params, state, x, y)
    updates, opt_state = optimizer.update(grads, opt_state)
    return optax.apply_updates(params, updates), state, opt_state


def train(x, y):
    params, state = forward.init(jax.random.PRNGKey(0), x)
    opt_state = optimizer.init(params)
    for _ in range(3):
        params, state, opt_state = _step(params, state, opt_state, x, y)
        {read}
    return params, state
"""


@pytest.mark.parametrize(
    ("read", "donated"),
    [
        ("pass", "donate_argnums=(0, 1, 2)"),
        # The new state holds the old state's arrays that the forward did not set: `state` stays.
        ("print(forward.apply(params, state, None, x))", "donate_argnums=(0, 2)"),
    ],
)
def test_haiku_state_is_aliased_by_apply(read: str, donated: str) -> None:
    (finding,) = findings(_HAIKU_STATE.format(read=read), DonateArgnums)
    assert f"`{donated}`" in finding.message, finding.message


# ---- summarised calls are pure: a loop body that calls them can become a lax loop's body ------------------------

_TRAIN_LOOP = """
import jax
import jax.numpy as jnp
import optax

tx = optax.sgd(1e-2)
trainer = make_trainer()


def loss(params, x):
    return jnp.sum((params["w"] * x - 1.0) ** 2)


@jax.jit
def train(params, opt_state, state, x: jax.Array):
    for _ in range(100):
        grads = jax.grad(loss)(params, x)
        {body}
    return params, opt_state, state
"""


@pytest.mark.parametrize(
    ("body", "fixed"),
    [
        ("updates, opt_state = tx.update(grads, opt_state)\n        params = optax.apply_updates(params, updates)",
         True),
        ("state = state.apply_gradients(grads=grads)", True),  # a traced TrainState, by the method's name
        ("state = trainer.apply_gradients(grads=grads)", False),  # an object of unknown type: may change itself
        ("updates, opt_state = opt.update(grads, opt_state)\n        params = optax.apply_updates(params, updates)",
         False),  # `opt` unbound here: nothing tells what it is
    ],
)
def test_summarised_calls_are_pure(body: str, fixed: bool) -> None:
    from jaxfix.codemods.loop_to_fori import LoopToForiLoop

    (finding,) = findings(_TRAIN_LOOP.format(body=body), LoopToForiLoop)
    assert (finding.fix is not None) is fixed, finding.message
