import jax
import jax.numpy as jnp
import optax


def smoothed_sign(iterations):
    """An optax transformation: its `update_fn` runs inside the user's jitted training step."""

    def init_fn(params):
        del params
        return optax.EmptyState()

    def update_fn(updates, state, params=None):
        del params
        def body(_, updates):
            return jax.tree.map(lambda u: jnp.tanh(3.0 * u), updates)
        updates = jax.lax.fori_loop(0, 20, body, updates)
        return updates, state

    return optax.GradientTransformation(init_fn, update_fn)
