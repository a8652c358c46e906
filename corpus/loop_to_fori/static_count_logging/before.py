from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="num_steps")
def report_progress(losses, num_steps):
    # The same loop with `num_steps` static: it unrolls at trace time and works; nothing to report.
    for step in range(num_steps):
        jax.debug.print("step {s}: loss {l}", s=step, l=losses[step])
    return jnp.mean(losses)
