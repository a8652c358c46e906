"""Small facts about LibCST syntax that every analysis needs: the names a target or a parameter list binds,
and the text of a dotted name."""

from __future__ import annotations

import libcst as cst


def target_names(target: cst.BaseExpression) -> list[str]:
    """Local names an assignment target binds (`a, (b, *c)` → a, b, c); attributes and subscripts bind none."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for element in target.elements for n in target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


def param_names(params: cst.Parameters) -> list[str]:
    """Every parameter name, in order: positional-only, ordinary, *args, keyword-only, **kwargs."""
    names = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        names.append(params.star_arg.name.value)
    names.extend(p.name.value for p in params.kwonly_params)
    if params.star_kwarg is not None:
        names.append(params.star_kwarg.name.value)
    return names


def dotted_name(node: cst.BaseExpression) -> str:
    """`jax.numpy` for the expression `jax.numpy`; TypeError for anything but names and attributes of names."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted_name(node.value)}.{node.attr.value}"
    raise TypeError(f"not a dotted name: {node!r}")
