from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="steps")
def pendulum(angles, dt, steps):
    theta = angles
    omega = jnp.zeros_like(angles)

    def body(carry, _):
        theta, omega = carry
        omega = omega - dt * jnp.sin(theta)
        theta = theta + dt * omega
        return (theta, omega), (theta, omega)

    (theta, omega), (thetas, omegas) = lax.scan(body, (theta, omega), length=steps)
    return thetas, omegas, theta
