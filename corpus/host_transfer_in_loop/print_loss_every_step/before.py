import jax
import jax.numpy as jnp


@jax.jit
def train_step(w, x, y):
    loss, grad = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
    return w - 0.1 * grad, loss


def train(w, x, y, steps):
    for step in range(steps):
        w, loss = train_step(w, x, y)
        print(f"step {step}: loss {loss:.4f}")  # waits for every step
    return w
