from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(2,))
def rollout(position, velocity, num_steps):
    print("unrolling", num_steps, "steps")  # trace-time only: stays
    dt = 0.1
    for _ in range(num_steps):
        velocity = velocity - dt * position
        position = position + dt * velocity
    jax.debug.print("after {} steps: {}", str(num_steps), position)
    return position, velocity
