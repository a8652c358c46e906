"""Where a function's inputs come from, best first (issue 4's order):

1. explicit: the corpus case.toml next to the file (its `entry`, `args`, `kwargs`, `rtol`/`atol`,
   `original_raises`/`expected`), or `[tool.jaxfix.verify.functions]` in pyproject.toml;
2. annotations: jaxtyping shapes with named dimensions, array types without a shape, float/int/bool, defaults;
3. call sites with literal arguments in the module and in the project's other modules (tests first);
4. signatures recorded by `jaxfix record` from the user's own test run.

All of it is read from source text and files: nothing here imports user code. Every usable source is handed to
the worker in this order; it takes the first one whose expressions evaluate.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any, Callable

from dataclasses import replace

from jaxfix.verify import annotations, callsites, functions, recorded, usage
from jaxfix.verify.settings import VerifySettings
from jaxfix.verify.targets import Source

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def sources(path: Path, text: str, name: str, settings: VerifySettings) -> tuple[list[Source], str]:
    """The usable sources for `name` in the module at `path` whose original source is `text`, and, when there is
    none, why."""
    tree = functions.parse(text)
    if tree is None:
        return [], "the original does not parse"
    definition = functions.definitions(tree).get(name)
    skip_first = False
    if definition is not None and definition.is_method and functions.test_class(tree, name.split(".")[0], str(path)):
        return [Source(kind="tests", origin="its own tests")], ""
    if definition is not None and definition.is_method:
        decorators = {_last(d) for d in getattr(definition.node, "decorator_list", [])}
        if "staticmethod" not in decorators and "classmethod" not in decorators:
            return [], "an instance method: verification has no object to call it on"
        skip_first = "classmethod" in decorators
    found: list[Source] = []
    why: list[str] = []

    case = case_source(path, name)
    if case is not None:
        found.append(case)
    arguments = functions.parameters(tree, name)
    given = settings.specs_for(path, name)
    if given is not None:
        if arguments is None:
            why.append("[tool.jaxfix.verify] names parameters, but the signature cannot be read from the source")
        else:
            params, positional, missing = signature_specs(arguments, lambda arg: given.get(arg.arg), skip_first=skip_first)
            unknown = set(given) - {p for p, _ in params}
            if missing or unknown:
                why.append(f"[tool.jaxfix.verify] for {name}: " + _missing_text(missing, unknown))
            else:
                found.append(Source(kind="specs", origin="pyproject.toml", params=tuple(params), positional=positional))

    if arguments is not None:
        keys, x64 = usage.key_parameters(tree, name), usage.enables_x64(text)

        def annotated(arg: ast.arg) -> dict[str, Any] | None:
            if arg.arg in keys:  # used as a PRNG key, whatever the annotation says
                return {"kind": "key", "shape": []}
            return annotations.spec_for(arg.annotation, x64=x64)

        params, positional, missing = signature_specs(arguments, annotated, skip_first=skip_first)
        if not missing:
            origin = "annotations" if any(spec["kind"] != "default" for _, spec in params) else "no parameters to draw"
            found.append(Source(kind="specs", origin=origin, params=tuple(params), positional=positional))
        else:
            why.append(f"no annotation for {', '.join(missing)}")
    else:
        why.append("the signature cannot be read from the source")

    sites = callsites.find(path, text, name, callsites.module_name(path))
    if sites.calls:
        shown = ", ".join(sites.where[:3]) + (", ..." if len(sites.where) > 3 else "")
        found.append(Source(kind="examples", origin=f"call sites {shown}", calls=tuple(sites.calls), imports=tuple(sites.imports)))
    else:
        why.append("no call with literal arguments in the module or the rest of the project")

    signatures = recorded.lookup(path, name, text)
    if signatures:
        count = f"{len(signatures)} signature{'s' if len(signatures) != 1 else ''}"
        found.append(Source(kind="recorded", origin=f"recorded by jaxfix record: {count}", calls=tuple(signatures)))
    else:
        why.append("no recorded signature (`jaxfix record -- pytest`)")
    constants = usage.compared_constants(tree, name)
    if found:
        return [replace(source, constants=constants) for source in found], ""
    return [], "no source of inputs: " + "; ".join(why)


def _last(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _missing_text(missing: list[str], unknown: set[str]) -> str:
    parts = []
    if missing:
        parts.append(f"no spec for {', '.join(missing)}")
    if unknown:
        parts.append(f"no parameter named {', '.join(sorted(unknown))}")
    return "; ".join(parts)


def case_source(path: Path, name: str) -> Source | None:
    """The corpus case.toml beside the file, when its `entry` is `name`."""
    spec_file = Path(path).parent / "case.toml"
    try:
        spec = tomllib.loads(spec_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if spec.get("entry") != name:
        return None
    return Source(
        kind="examples",
        origin="case.toml",
        calls=({"args": list(spec.get("args", [])), "kwargs": dict(spec.get("kwargs", {}))},),
        expected=spec.get("expected"),
        original_raises=spec.get("original_raises"),
        rtol=spec.get("rtol"),
        atol=spec.get("atol"),
        no_grad=spec.get("no_grad"),
        no_nan=spec.get("no_nan"),
    )


def signature_specs(
    arguments: ast.arguments, spec_of: Callable[[ast.arg], dict[str, Any] | None], *, skip_first: bool = False
) -> tuple[list[tuple[str, dict[str, Any]]], int, list[str]]:
    """Specs of the parameters in signature order (positional ones, then keyword-only), how many lead and are
    passed by position (so that `static_argnums` sees them), and the parameters with no spec. A parameter
    with a default and no spec is left out of the call."""
    positional = list(arguments.posonlyargs) + list(arguments.args)
    if skip_first and positional:
        positional = positional[1:]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    params: list[tuple[str, dict[str, Any]]] = []
    missing: list[str] = []
    leading, open_run = 0, True
    for arg, default in zip(positional, defaults):
        spec = spec_of(arg)
        if spec is None and default is not None:
            spec = {"kind": "default"}
        if spec is None:
            missing.append(arg.arg)
            continue
        params.append((arg.arg, spec))
        if spec["kind"] == "default":
            open_run = False
        elif open_run:
            leading += 1
    for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        spec = spec_of(arg)
        if spec is None and default is not None:
            spec = {"kind": "default"}
        if spec is None:
            missing.append(arg.arg)
        else:
            params.append((arg.arg, spec))
    return params, leading, missing
