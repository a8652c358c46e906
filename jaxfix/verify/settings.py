"""`[tool.jaxfix.verify]` in pyproject.toml: run options, and input specs per function.

    [tool.jaxfix.verify]
    max-examples = 50        # inputs per function and device
    seed = 0
    timeout = 120            # seconds per function; the worker is stopped past it
    deadline = 5             # seconds per call, not counting JAX's compile time
    magnitude = 10.0         # |value| bound of floats drawn from specs and annotations
    nan = true               # mix NaN and ±inf into some float inputs (false: finite only)
    grad = true              # also compare gradients (where there are float inputs)

    [tool.jaxfix.verify.functions.smooth]            # a function name, or "src/pkg/mod.py:smooth"
    x = "float32[b, 16]"     # dtype[dims]: ints, names shared across arguments, "*name", "...", "_"
    y = "np.float64[b]"      # a NumPy array rather than a JAX array
    steps = "int 1..20"      # also: "int", "float", "float -1..1", "bool", "key", "key[4]", "none", "default"
    scale = 0.5              # a TOML number or bool: that value, always
    w = "= jnp.eye(3)"       # an expression (jax, jnp, np, lax in scope): that value, always
    params = { w = "float32[d, d]", b = "float32[d]" }   # a table or list: a dict or tuple of specs
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jaxfix.config import ConfigError, find_config
from jaxfix.verify.annotations import JAXTYPING_DTYPES, parse_dims
from jaxfix.verify.interpreter import OWN, Interpreter
from jaxfix.verify.targets import Options

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

OPTION_KEYS = {
    "max-examples": "max_examples", "seed": "seed", "timeout": "timeout", "deadline": "deadline",
    "magnitude": "magnitude", "nan": "nan", "grad": "grad",
}  # fmt: skip
DTYPES = set(JAXTYPING_DTYPES.values()) | {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint32", "bool"}
_ARRAY = re.compile(r"^(?P<numpy>np\.|numpy\.)?(?P<dtype>[a-z0-9]+)(\[(?P<dims>[^\]]*)\])?$")
_RANGE = re.compile(r"^(?P<kind>int|float)\s+(?P<low>[-+0-9.eE]+)\s*\.\.\s*(?P<high>[-+0-9.eE]+)$")


@dataclass
class VerifySettings:
    options: Options = field(default_factory=Options)
    functions: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # key -> param -> spec
    root: Path | None = None  # the folder of the pyproject.toml
    python: Interpreter = OWN  # runs the user's code (the command line chooses it: interpreter.choose)

    def specs_for(self, path: Path, name: str) -> dict[str, dict[str, Any]] | None:
        """The specs given for `name` in `path`: "relative/path.py:name" wins over a bare "name"."""
        if self.root is not None:
            try:
                relative = path.resolve().relative_to(self.root).as_posix()
                if f"{relative}:{name}" in self.functions:
                    return self.functions[f"{relative}:{name}"]
            except ValueError:
                pass
        return self.functions.get(name)


def load(start: Path | None = None) -> VerifySettings:
    """The settings of the nearest pyproject.toml with [tool.jaxfix] at or above `start` (a checked file or
    folder; default the current folder): the checked code's settings, wherever jaxfix runs."""
    path = find_config(start or Path.cwd())
    if path is None:
        return VerifySettings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: cannot read [tool.jaxfix.verify]: {error}") from None
    table = data.get("tool", {}).get("jaxfix", {}).get("verify", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.jaxfix.verify] must be a table")
    settings = VerifySettings(root=path.parent)
    unknown = set(table) - set(OPTION_KEYS) - {"functions"}
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.jaxfix.verify] key(s): {', '.join(sorted(unknown))}")
    changes = {}
    for key, attribute in OPTION_KEYS.items():
        if key in table:
            value, default = table[key], getattr(Options(), attribute)
            if type(value) is not type(default) and not (isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool)):
                raise ConfigError(f"{path}: [tool.jaxfix.verify] {key} must be a {type(default).__name__}")
            changes[attribute] = type(default)(value)
    settings.options = replace(Options(), **changes)
    functions = table.get("functions", {})
    if not isinstance(functions, dict):
        raise ConfigError(f"{path}: [tool.jaxfix.verify.functions] must be a table")
    for function, params in functions.items():
        if not isinstance(params, dict):
            raise ConfigError(f"{path}: [tool.jaxfix.verify.functions.{function}] must be a table of parameter specs")
        try:
            settings.functions[function] = {name: parse_spec(value) for name, value in params.items()}
        except ValueError as error:
            raise ConfigError(f"{path}: [tool.jaxfix.verify.functions.{function}]: {error}") from None
    return settings


def parse_spec(value: Any) -> dict[str, Any]:
    """One parameter's spec from its TOML value (see the module docstring)."""
    if isinstance(value, bool) or isinstance(value, (int, float)):
        return {"kind": "value", "expr": repr(value)}
    if isinstance(value, list):
        return {"kind": "tuple", "items": [parse_spec(v) for v in value]}
    if isinstance(value, dict):
        return {"kind": "dict", "items": {k: parse_spec(v) for k, v in value.items()}}
    if not isinstance(value, str):
        raise ValueError(f"cannot read the spec {value!r}")
    text = value.strip()
    if text.startswith("="):
        return {"kind": "value", "expr": text[1:].strip()}
    if text in ("float", "int", "bool", "none", "default"):
        return {"kind": text}
    bounded = _RANGE.match(text)
    if bounded:
        kind = bounded["kind"]
        cast = int if kind == "int" else float
        try:
            return {"kind": kind, "min": cast(bounded["low"]), "max": cast(bounded["high"])}
        except ValueError:
            raise ValueError(f"bad range in {value!r}") from None
    array = _ARRAY.match(text)
    if array:
        dims = parse_dims(array["dims"]) if array["dims"] is not None else None
        if array["dims"] is not None and dims is None:
            raise ValueError(f"cannot read the dimensions of {value!r}")
        if array["dtype"] == "key":
            return {"kind": "key", "shape": dims or []}
        if array["dtype"] in DTYPES:
            return {"kind": "array", "dtype": array["dtype"], "shape": dims, "numpy": bool(array["numpy"])}
    raise ValueError(f"cannot read the spec {value!r} (examples: \"float32[b, 3]\", \"int 0..10\", \"bool\", \"= jnp.eye(3)\")")
