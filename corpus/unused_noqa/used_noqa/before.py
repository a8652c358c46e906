import jax
import jax.numpy as jnp


@jax.jit
def normalise(x):
    # Printing the tracer at trace time is what is wanted here: it shows the shape once per compilation.
    print("tracing with", x)  # noqa: JF601
    return x / jnp.linalg.norm(x)
