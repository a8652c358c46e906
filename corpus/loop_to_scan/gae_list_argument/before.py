import jax
import jax.numpy as jnp


@jax.jit
def gae(rewards, values, dones, gamma, lam):
    advantages = []
    gae = 0.0
    for t in reversed(range(len(rewards) - 1)):
        delta = rewards[t] + gamma * values[t + 1] * (1 - dones[t]) - values[t]
        gae = delta + gamma * lam * (1 - dones[t]) * gae
        advantages.append(gae)
    advantages = advantages[::-1]
    return jnp.stack(advantages)


def advantages_of(rollout, gamma, lam):
    # the rollout is a list of per-step dicts: `gae` gets Python lists, which a Python int indexes and a
    # scan's traced index would not
    rewards = [step["reward"] for step in rollout]
    values = [step["value"] for step in rollout]
    dones = [step["done"] for step in rollout]
    return gae(rewards, values, dones, gamma, lam)
