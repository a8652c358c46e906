import jax
import jax.numpy as jnp


@jax.jit
def mse(pred, target):
    loss = jnp.mean((pred - target) ** 2)
    print(f"loss={loss:.4f} over {pred.shape} items, worst {jnp.max(jnp.abs(pred - target))!r}")
    return loss
