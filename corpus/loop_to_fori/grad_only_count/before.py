import jax
import jax.numpy as jnp


def penalty(w, n):
    # Only jax.grad reaches this function, which runs it on concrete values: `range(n)` works.
    for k in range(n):
        jax.debug.print("term {k}", k=k)
    return jnp.sum(w**2) * n


grad_penalty = jax.grad(penalty)
