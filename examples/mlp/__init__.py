"""A small MLP classifier trained with optax on synthetic data."""
