"""Evaluation: accuracy, calibration and inference speed of a trained MLP."""

import time

import jax
import jax.numpy as jnp
from jax.experimental.pjit import pjit

from .model import apply_mlp

NUM_BINS = 15

forward = pjit(apply_mlp)


@jax.jit
def accuracy(logits, y):
    return jnp.mean(jnp.argmax(logits, axis=-1) == y)


def eval_step(params, x, y):
    logits = forward(params, x)
    return accuracy(logits, y)


def batched_accuracy(params, x, y, batch_size=256):
    accs = []
    for start in range(0, x.shape[0], batch_size):
        accs.append(eval_step(params, x[start:start + batch_size], y[start:start + batch_size]))
    return float(jnp.mean(jnp.stack(accs)))


def predict_one(params, x):
    return jax.nn.softmax(apply_mlp(params, x))


def per_example_probs(params, x):
    return jnp.stack([predict_one(params, x[i]) for i in range(len(x))])


@jax.jit
def expected_calibration_error(probs, y):
    confidence = probs.max(axis=-1)
    correct = probs.argmax(axis=-1) == y
    ece = 0.0
    for b in range(NUM_BINS):
        lo, hi = b / NUM_BINS, (b + 1) / NUM_BINS
        in_bin = (confidence > lo) & (confidence <= hi)
        gap = jnp.abs(jnp.sum(correct * in_bin) - jnp.sum(confidence * in_bin))
        ece = ece + gap / probs.shape[0]
    return ece


def time_inference(params, x, repeats=10):
    start = time.perf_counter()
    for _ in range(repeats):
        logits = jax.jit(lambda v: apply_mlp(params, v))(x)
    elapsed = time.perf_counter() - start
    return elapsed / repeats
