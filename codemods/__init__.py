"""The codemods, one module each; importable as `jaxfix.codemods`. The registry finds them here."""
