import jax.numpy as jnp


def project(rows, weights):
    out = []
    for i in range(rows.shape[0]):
        out.append(jnp.dot(weights, rows[i]))
    return jnp.stack(out)
