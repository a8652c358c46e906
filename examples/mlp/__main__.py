"""Train the MLP on synthetic data and print what it learned: `python -m mlp`."""

import time

import jax

from . import data, evaluate, train
from .model import count_params, init_mlp


def main(seed=0):
    key = jax.random.key(seed)
    key, data_key, init_key = jax.random.split(key, 3)
    (x_train, y_train), (x_test, y_test) = data.make_dataset(data_key, 1024, 256)
    data.fit_normalizer(x_train)
    x_train, x_test = data.normalize(x_train), data.normalize(x_test)

    params = init_mlp(init_key, [data.NUM_FEATURES, 64, 64, data.NUM_CLASSES])
    print(f"parameters: {count_params(params)}")

    start = time.perf_counter()
    params, history = train.train(params, x_train, y_train, x_test, y_test, key)
    print(f"train time: {time.perf_counter() - start:.2f} s")

    print(f"train accuracy: {evaluate.batched_accuracy(params, x_train, y_train):.4f}")
    print(f"test accuracy: {evaluate.batched_accuracy(params, x_test, y_test):.4f}")

    start = time.perf_counter()
    probs = evaluate.per_example_probs(params, x_test)
    print(f"per-example eval: {time.perf_counter() - start:.2f} s")
    print(f"calibration error: {float(evaluate.expected_calibration_error(probs, y_test)):.4f}")
    print(f"inference: {evaluate.time_inference(params, x_test) * 1e6:.0f} us per batch")


if __name__ == "__main__":
    main()
