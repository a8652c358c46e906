"""Synthetic classification data: Gaussian points labelled by a random teacher network."""

import jax
import jax.numpy as jnp

from .model import apply_mlp, init_mlp

NUM_FEATURES = 16
NUM_CLASSES = 4

# Feature statistics of the training set, set by fit_normalizer.
MEAN = 0.0
STD = 1.0


def make_dataset(key, num_train, num_test, hidden=(64, 64)):
    key, teacher_key = jax.random.split(key)
    teacher = init_mlp(teacher_key, [NUM_FEATURES, *hidden, NUM_CLASSES])
    scale = jnp.linspace(0.5, 3.0, NUM_FEATURES)
    x_train = jax.random.normal(key, (num_train, NUM_FEATURES)) * scale
    x_test = jax.random.normal(key, (num_test, NUM_FEATURES)) * scale
    y_train = jnp.argmax(apply_mlp(teacher, x_train / scale), axis=-1)
    y_test = jnp.argmax(apply_mlp(teacher, x_test / scale), axis=-1)
    return (x_train, y_train), (x_test, y_test)


def fit_normalizer(x):
    global MEAN, STD
    MEAN = x.mean(axis=0)
    STD = x.std(axis=0)


@jax.jit
def normalize(x):
    return (x - MEAN) / STD


def batches(key, x, y, batch_size):
    perm = jax.random.permutation(key, x.shape[0])
    for start in range(0, x.shape[0] - batch_size + 1, batch_size):
        idx = perm[start:start + batch_size]
        yield x[idx], y[idx]
