import os

# Tests run on CPU with float32 defaults, whatever machine they are on, so numbers agree across runs.
os.environ.setdefault("JAX_PLATFORMS", "cpu")
