import jax
import optax

from transform import smoothed_sign


def run(params):
    optimizer = optax.chain(smoothed_sign(20), optax.sgd(0.1))
    state = optimizer.init(params)
    grads = jax.tree.map(lambda p: 2.0 * p, params)
    updates, _ = jax.jit(optimizer.update)(grads, state, params)
    return optax.apply_updates(params, updates)
