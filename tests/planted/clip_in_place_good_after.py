import numpy as np


def clamp_total_good(x: np.ndarray) -> float:
    x[...] = np.minimum(np.maximum(x, -1.0), 1.0)  # clips in place too
    return float(x.sum())
