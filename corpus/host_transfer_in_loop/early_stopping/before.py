import jax
import jax.numpy as jnp


@jax.jit
def newton_step(x):
    fx = x ** 2 - 2.0
    return x - fx / (2.0 * x), jnp.abs(fx)


def solve(x, max_steps):
    # The host needs the residual to decide whether to stop: a transfer the loop cannot avoid.
    for _ in range(max_steps):
        x, residual = newton_step(x)
        if float(residual) < 1e-6:
            break
    return x
