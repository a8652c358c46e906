import jax
import jax.numpy as jnp


def soft_update(target, online, step):
    # `step` is a tracer: every call comes from a jitted function that passes its own argument.
    def true_fn(target):
        return jax.tree.map(lambda t, o: 0.9 * t + 0.1 * o, target, online)
    target = jax.lax.cond(step % 4 == 0, true_fn, lambda target: target, target)
    return target


@jax.jit
def train_step(target, online, step):
    online = jax.tree.map(lambda p: p - 0.01 * p, online)
    target = soft_update(target, online, step)
    return target, online
