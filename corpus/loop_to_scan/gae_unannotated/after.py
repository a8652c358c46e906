import jax
import jax.numpy as jnp


@jax.jit
def gae(rewards, values, dones, gamma, lam):
    gae = 0.0
    def step(gae, t):
        delta = rewards[t] + gamma * values[t + 1] * (1 - dones[t]) - values[t]
        gae = delta + gamma * lam * (1 - dones[t]) * gae
        return gae, gae
    gae = jnp.zeros_like(jax.eval_shape(step, gae, 0)[0])
    gae, advantages = jax.lax.scan(step, gae, jnp.arange(len(rewards) - 1), reverse=True)
    return advantages
