import jax
import jax.numpy as jnp


@jax.jit
def logits_to_probs(logits, temperature=None):
    scaled = logits / temperature if temperature else logits
    return jax.nn.softmax(scaled)
