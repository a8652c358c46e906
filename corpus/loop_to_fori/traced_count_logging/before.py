import jax
import jax.numpy as jnp


@jax.jit
def report_progress(losses, num_steps):
    # Logs each step from inside the compiled function: nothing is carried, and `num_steps` is a traced
    # argument, so `range(num_steps)` fails at trace time (TracerIntegerConversionError).
    for step in range(num_steps):
        jax.debug.print("step {s}: loss {l}", s=step, l=losses[step])
    return jnp.mean(losses)
