import jax
import jax.numpy as jnp


@jax.jit
def quadrant(a, b):
    def true_fn():
        return jnp.int32(1)
    def false_fn():
        def true_fn_2():
            return jnp.int32(4)
        def false_fn_2():
            def true_fn_3():
                return jnp.int32(2)
            def false_fn_3():
                return jnp.int32(3)
            return jax.lax.cond(b > 0, true_fn_3, false_fn_3)
        return jax.lax.cond(a > 0, true_fn_2, false_fn_2)
    q = jax.lax.cond(jnp.logical_and(a > 0, b > 0), true_fn, false_fn)
    return q
