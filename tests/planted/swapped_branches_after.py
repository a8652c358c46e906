import jax
import jax.numpy as jnp


def soft_clip(x, limit):
    return jax.lax.cond(limit > 0, lambda x: x, lambda x: jnp.tanh(x / limit) * limit, x)  # planted: swapped


if __name__ == "__main__":
    print(soft_clip(jnp.ones((4, 3)), 2.0))
