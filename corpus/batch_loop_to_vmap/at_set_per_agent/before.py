import jax
import jax.numpy as jnp


@jax.jit
def greedy_actions(q_values, temperature):
    # one action per agent, written into a buffer as multi-agent code does
    actions = jnp.zeros(q_values.shape[0], dtype=jnp.int32)
    for a in range(q_values.shape[0]):
        actions = actions.at[a].set(jnp.argmax(q_values[a] / temperature))
    return actions
