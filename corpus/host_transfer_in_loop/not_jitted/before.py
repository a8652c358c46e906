import numpy as np


def step(w):
    return w * 0.5, float(np.sum(w))


def run(w, n):
    # No jitted call in the loop: NumPy values are on the host already.
    sums = []
    for _ in range(n):
        w, total = step(w)
        sums.append(float(total))
    return w, sums
