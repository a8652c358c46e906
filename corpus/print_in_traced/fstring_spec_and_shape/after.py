import jax
import jax.numpy as jnp


@jax.jit
def mse(pred, target):
    loss = jnp.mean((pred - target) ** 2)
    jax.debug.print("loss={:.4f} over {} items, worst {!r}", loss, str(pred.shape), jnp.max(jnp.abs(pred - target)))
    return loss
