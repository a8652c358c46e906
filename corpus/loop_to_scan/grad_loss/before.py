import jax
import jax.numpy as jnp


def loss(w, xs):
    h = jnp.zeros(w.shape[0])
    total = 0.0
    for x in xs:
        h = jnp.tanh(w @ h + x)
        total = total + jnp.sum(h ** 2)
    return total / xs.shape[0]


grad_loss = jax.jit(jax.grad(loss))
