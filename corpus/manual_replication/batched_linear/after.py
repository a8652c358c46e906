import jax
import jax.numpy as jnp


def bad_batched_linear(batched_x: jax.Array, weights: jax.Array, bias: jax.Array):
    # The reference's example: the weights and bias copied once per row.
    replicated_weights = jnp.broadcast_to(weights, (len(batched_x),) + weights.shape)
    replicated_bias = jnp.broadcast_to(bias, (len(batched_x),) + bias.shape)
    return jnp.einsum("bi,bij->bj", batched_x, replicated_weights) + replicated_bias
