import jax
import jax.numpy as jnp


@jax.jit
def greedy_actions(q_values, temperature):
    actions = jnp.zeros(len(q_values), dtype=jnp.int32)
    for a in range(len(q_values)):
        actions = actions.at[a].set(jnp.argmax(q_values[a] / temperature))
    return actions


def act(q_pred, q_prey, temperature):
    # two kinds of agents with different numbers of actions: a tuple, not the rows of one array
    return greedy_actions((q_pred, q_prey), temperature)
