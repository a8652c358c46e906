"""Facts about a module that several codemods need, computed once per module and shared."""

from jaxfix.analysis.context import ModuleContext

__all__ = ["ModuleContext"]
