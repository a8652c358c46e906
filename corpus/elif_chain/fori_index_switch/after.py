import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def schedule(x):
    def body(i, x):
        # The loop index is a tracer inside lax.fori_loop.
        def branch_0(x):
            return x * 2.0
        def branch_1(x):
            return jnp.sin(x)
        def branch_2(x):
            return x - 0.1
        index = jnp.select([i == 0, i == 1], [0, 1], 2)
        x = lax.switch(index, [branch_0, branch_1, branch_2], x)
        return x

    return lax.fori_loop(0, 4, body, x)
