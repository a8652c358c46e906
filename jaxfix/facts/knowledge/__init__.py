"""What JAX and the libraries built on it do, as data only: one module per library."""
