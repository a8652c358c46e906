import jax.numpy as jnp


def energy(x):
    return x ** 2


def main(x: float) -> None:
    print("energy", energy(x))
