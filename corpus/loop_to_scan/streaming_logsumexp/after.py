import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def logsumexp_rows(xs):
    # Streaming log-sum-exp over the rows, one row at a time.
    m = jnp.full(xs.shape[1:], -jnp.inf)
    s = jnp.zeros(xs.shape[1:])
    def step(carry, x_i):
        m, s = carry
        m_new = jnp.maximum(m, x_i)
        s = s * jnp.exp(m - m_new) + jnp.exp(x_i - m_new)
        m = m_new
        return (m, s), None
    (m, s), _ = lax.scan(step, (m, s), xs)
    return m + jnp.log(s)
