import jax
import jax.numpy as jnp


def loss(w, xs):
    h = jnp.zeros(w.shape[0])
    total = 0.0
    def step(carry, x):
        h, total = carry
        h = jnp.tanh(w @ h + x)
        total = total + jnp.sum(h ** 2)
        return (h, total), None
    (h, total), _ = jax.lax.scan(step, (h, total), xs)
    return total / xs.shape[0]


grad_loss = jax.jit(jax.grad(loss))
