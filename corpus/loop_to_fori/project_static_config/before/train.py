import jax

from config import Config
from model import forward


def run(x):
    return jax.jit(forward)(Config(), x)
