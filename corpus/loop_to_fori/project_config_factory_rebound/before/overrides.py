import types


def with_overrides(config, **changes):
    """A namespace of the config's fields with some replaced: jaxfix does not know what it holds."""
    return types.SimpleNamespace(**{**config.to_dict(), **changes})
