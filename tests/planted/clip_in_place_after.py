import numpy as np


def clamp_total(x: np.ndarray) -> float:
    return float(np.clip(x, -1.0, 1.0).sum())  # planted: same value, but the caller's x is no longer clipped
