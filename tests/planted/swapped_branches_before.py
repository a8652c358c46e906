import jax
import jax.numpy as jnp


def soft_clip(x, limit):
    if limit > 0:
        return jnp.tanh(x / limit) * limit
    return x


if __name__ == "__main__":
    print(soft_clip(jnp.ones((4, 3)), 2.0))
