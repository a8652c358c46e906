import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def logsumexp_rows(xs):
    # Streaming log-sum-exp over the rows, one row at a time.
    m = jnp.full(xs.shape[1:], -jnp.inf)
    s = jnp.zeros(xs.shape[1:])
    for i in range(len(xs)):
        m_new = jnp.maximum(m, xs[i])
        s = s * jnp.exp(m - m_new) + jnp.exp(xs[i] - m_new)
        m = m_new
    return m + jnp.log(s)
