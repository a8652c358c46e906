import jax
import jax.numpy as jnp


@jax.jit
def train_step(w, x):
    loss, grad = jax.value_and_grad(lambda w: jnp.sum((x * w) ** 2))(w)
    return w - 0.01 * grad, loss


def train(w, x, steps, log_every=100):
    # Modelled on flax's examples: metrics are fetched every `log_every` steps only.
    for step in range(steps):
        w, loss = train_step(w, x)
        if step % log_every == 0 or step == steps - 1:
            print(f"step {step}: {float(loss):.3f}")
    return w
