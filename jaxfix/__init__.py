"""jaxfix: a source-to-source rewriter for JAX code."""

__version__ = "0.1.0"
