import jax
import jax.numpy as jnp


@jax.jit
def greedy_actions(q_values, temperature):
    # one action per agent, written into a buffer as multi-agent code does
    def body(q_value):
        return jnp.argmax(q_value / temperature)
    actions = jax.vmap(body)(q_values).astype(jnp.int32)
    return actions
