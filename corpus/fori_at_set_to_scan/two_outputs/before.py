from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="steps")
def pendulum(angles, dt, steps):
    theta = angles
    omega = jnp.zeros_like(angles)
    thetas = jnp.zeros((steps,) + angles.shape, angles.dtype)
    omegas = jnp.zeros((steps,) + angles.shape, angles.dtype)

    def body(i, carry):
        thetas, theta, omega, omegas = carry
        omega = omega - dt * jnp.sin(theta)
        theta = theta + dt * omega
        thetas = thetas.at[i].set(theta)
        omegas = omegas.at[i].set(omega)
        return thetas, theta, omega, omegas

    thetas, theta, omega, omegas = lax.fori_loop(0, steps, body, (thetas, theta, omega, omegas))
    return thetas, omegas, theta
