import jax
import jax.numpy as jnp


@jax.jit
def train_step(w, x, y):
    loss, grad = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
    return w - 0.1 * grad, loss


@jax.jit
def eval_step(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def fit(w, train_batches, eval_batches, steps, eval_every=50):
    history = []
    for step in range(steps):
        x, y = train_batches[step % len(train_batches)]
        w, loss = train_step(w, x, y)
        if step % eval_every == 0:
            # A pass over the evaluation set, once in `eval_every` steps.
            total = 0.0
            for x_eval, y_eval in eval_batches:
                eval_loss = eval_step(w, x_eval, y_eval)
                total += float(eval_loss)
            history.append(total / len(eval_batches))
    return w, history
