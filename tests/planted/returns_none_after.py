import jax.numpy as jnp


def energy(x):
    return x ** 3  # planted: only main reaches it, and main returns None


def main(x: float) -> None:
    print("energy", energy(x))
