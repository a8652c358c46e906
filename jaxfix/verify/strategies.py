"""Hypothesis strategies for a function's arguments (worker side: imports JAX and NumPy).

Two ways in:
- `like(value)`: inputs shaped like a concrete example (case.toml arguments, a call site's literal arguments,
  recorded signatures): the same pytree structure, shapes and dtypes; array and float values drawn within
  twice the example's largest magnitude; Python ints one of 0, 1 and the example's value (trip counts and sizes:
  the edge cases, and few enough values that a static argument does not recompile the function for every
  input); bools both ways; strings, None and other objects kept.
- `from_specs(params)`: inputs from specs (annotations, `[tool.jaxfix.verify]`):
      {"kind": "array", "dtype": "float32", "shape": [3, "b", "*batch", "...", "_"] or None, "numpy": false,
       "bound": |value| bound (floats), "min"/"max": value range (integers)}
      {"kind": "float", "min": -1, "max": 1} {"kind": "int", "min": 0, "max": 8} {"kind": "int", "choices": [0, 1, 5]}
      {"kind": "bool"} {"kind": "key", "shape": []}
      {"kind": "value", "expr": "..."} {"kind": "default"} {"kind": "tuple"|"list", "items": [...]}
      {"kind": "dict", "items": {...}} {"kind": "none"}
  A named dimension has one size per example across all arguments (jaxtyping's rule); `*name` is a named run
  of 0 to 2 dimensions, `...` an anonymous one, `_` one anonymous dimension; arrays with no shape at all share
  one shape drawn per example (rank 0 to 2), since such arguments usually meet in elementwise code.

Floats have no subnormals. Unless turned off (`nan=False`), one example in 8 mixes NaN into its float values and
one ±inf (`with_nonfinite`). Drawn JAX arrays stay NumPy data (`Drawn`) until a call places them on the device under test, so that each call gets
fresh buffers (donation cannot leak from the original's call into the rewrite's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

MIN_SIDE, MAX_SIDE = 1, 4  # sizes of named and unnamed dimensions
MAX_VARIADIC = 2  # dimensions in a `*batch` or `...` run
INT_BOUND = 8  # Python ints from annotations: -8..8 (sizes, steps, indices; negative ones pick else branches)


@dataclass(frozen=True)
class Drawn:
    """NumPy data that is passed as a JAX array (placed on the device at call time)."""

    array: np.ndarray


@dataclass(frozen=True)
class DrawnKey:
    """A typed PRNG key: its raw data and implementation, made into a key on the device at call time."""

    data: np.ndarray
    impl: str


@dataclass(frozen=True)
class Call:
    args: tuple
    kwargs: dict


# ---- elements ---------------------------------------------------------------------------------------------


NONFINITE = ((math.nan,), (math.inf, -math.inf))  # what the float values of one example may mix in
FINITE_EXAMPLES = 6  # of every 8 examples, this many are drawn without NaN or infinities


def with_nonfinite(nan: bool, build: Callable[[tuple[float, ...]], st.SearchStrategy]) -> st.SearchStrategy:
    """Examples from `build(nonfinite)`: with `nan`, one example in 8 mixes NaN into its float values (about half
    of them) and one ±inf, the other 6 in 8 stay finite. That is a fair share whatever the number of float
    arguments (drawn per argument, a function of six arrays would rarely see an example without NaN): a rewrite
    that loses a NaN (`jnp.where(x <= 1.0, 1.0 - x, 0.0)` for `if x > 1.0: return 0.0`) differs on nothing else,
    and the finite examples are left for everything else a rewrite may get wrong (gradients are compared on those
    only). Shrinking goes towards the finite examples: a counterexample keeps a NaN only when it needs one."""
    if not nan:
        return build(())
    return evenly([build(())] * FINITE_EXAMPLES + [build(kind) for kind in NONFINITE])


def _float_elements(
    dtype: np.dtype,
    bound: float,
    nonfinite: tuple[float, ...] = (),
    constants: tuple[float, ...] = (),
    leaf: Callable[[st.SearchStrategy], st.SearchStrategy] | None = None,
) -> st.SearchStrategy:
    """A float leaf: `leaf(elements)` (an array of such elements; default: one float). Elements are uniform within
    ±bound, one of special_floats, or one of at_constants (a quarter each: uniform, the fixed special values, the
    constants the source compares against with their neighbours, and those constants alone; half and half
    without constants); where `nonfinite` is given (with_nonfinite), half of them one of those instead."""
    leaf = leaf or (lambda elements: elements)
    width = {2: 16, 4: 32, 8: 64}.get(np.dtype(dtype).itemsize, 32) if np.dtype(dtype).kind == "f" else 32
    branches = [st.floats(min_value=-bound, max_value=bound, allow_nan=False, allow_infinity=False, allow_subnormal=False, width=width)]
    for values in (special_floats(dtype, bound), at_constants(dtype, constants), at_constants(dtype, constants, neighbours=False)):
        if values:
            branches.append(st.sampled_from(values))
    if nonfinite:  # as many branches again, so half the elements: branches, not a choice of their own per element,
        branches += [st.sampled_from(nonfinite) for _ in branches]  # which would overrun Hypothesis's buffer on large arrays
    return leaf(st.one_of(branches))


def evenly(choices: list[st.SearchStrategy]) -> st.SearchStrategy:
    """One of `choices`, each about as often, shrinking towards the first. `st.one_of` flattens nested `one_of`s
    into one list of branches, which would weigh a choice by how many branches it holds."""
    return st.sampled_from(choices).flatmap(lambda chosen: chosen)


def _finfo(dtype: Any) -> np.finfo:
    try:
        return np.finfo(dtype if np.dtype(dtype).kind == "f" else np.float32)
    except (TypeError, ValueError):
        return np.finfo(np.float32)


def special_floats(dtype: Any, bound: float, constants: tuple[float, ...] = ()) -> list[float]:
    """Values a uniform draw within ±bound almost never hits: exact zero (and -0.0, whose reciprocal is -inf), ±1,
    tiny and huge magnitudes, then at_constants. Only values `dtype` holds as normal numbers."""
    info = _finfo(dtype)
    kind_dtype = np.dtype(info.dtype)
    values: list[float] = [0.0, 1.0, -1.0, 1e-3, -1e-3]
    for tiny in (1e-7, 1e-20):
        values += [tiny, -tiny]
    for huge in (1e4 * bound, 1e8 * bound):
        values += [huge, -huge]
    out = [-0.0] + _normal(kind_dtype, info, values)
    return out + [v for v in at_constants(dtype, constants) if v not in out]


def at_constants(dtype: Any, constants: tuple[float, ...], *, neighbours: bool = True) -> list[float]:
    """The constants the function's source compares against (and the values one step of its arithmetic carries
    onto them: usage.compared_constants), each with its neighbours in `dtype`: `x > 0.5` is decided differently at
    0.5 and at the next float above it, and `x * 0.8 > 0.3` at the float nearest 0.3 / 0.8 (or a neighbour, where
    the step rounds). `_float_elements` draws the constants themselves from a branch of their own too, so that
    their neighbours do not dilute them."""
    info = _finfo(dtype)
    kind_dtype = np.dtype(info.dtype)
    values: list[float] = []
    with np.errstate(over="ignore"):
        for constant in constants:
            c = kind_dtype.type(constant)
            values.append(float(c))
            if neighbours:
                values += [float(np.nextafter(c, kind_dtype.type(np.inf))), float(np.nextafter(c, kind_dtype.type(-np.inf)))]
    return _normal(kind_dtype, info, values)


def _normal(kind_dtype: np.dtype, info: np.finfo, values: list[float]) -> list[float]:
    """`values` rounded to the dtype, those it holds as normal numbers (and zero), once each."""
    out: list[float] = []
    with np.errstate(over="ignore"):
        rounded = [float(kind_dtype.type(v)) for v in values]
    for value in rounded:
        if math.isfinite(value) and (value == 0.0 or float(info.tiny) <= abs(value) <= float(info.max)) and value not in out:
            out.append(value)
    return out


def _int_elements(low: int, high: int, constants: tuple[float, ...] = ()) -> st.SearchStrategy:
    """Integers in [low, high], and the integer constants the source compares against with their neighbours
    (within the range)."""
    special = sorted({v for c in constants if float(c).is_integer() for v in (int(c) - 1, int(c), int(c) + 1) if low <= v <= high})
    drawn = st.integers(low, high)
    return st.one_of(drawn, st.sampled_from(special)) if special else drawn


def is_bfloat16(dtype: Any) -> bool:
    return str(dtype) == "bfloat16"


def numpy_array(
    dtype: Any,
    shape: tuple[int, ...],
    *,
    bound: float,
    nonfinite: tuple[float, ...] = (),
    low: int | None = None,
    high: int | None = None,
    constants: tuple[float, ...] = (),
) -> st.SearchStrategy:
    """An array of `dtype` and `shape`: floats within ±bound; integers in [low, high] (default ±bound, clipped to
    the dtype); bools; complex numbers with bounded parts. bfloat16 is drawn as float32 and rounded."""
    dtype_name = str(dtype)
    if is_bfloat16(dtype):
        import ml_dtypes

        return numpy_array(np.float32, shape, bound=bound, nonfinite=nonfinite, constants=constants).map(lambda a: a.astype(ml_dtypes.bfloat16))
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        elements: st.SearchStrategy = st.booleans()
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo = int(-bound) if low is None else low
        hi = int(bound) if high is None else high
        elements = _int_elements(max(lo, int(info.min)), min(max(hi, lo), int(info.max)), constants)
    elif dtype.kind == "c":
        part = np.float32 if dtype.itemsize == 8 else np.float64
        return st.tuples(numpy_array(part, shape, bound=bound, nonfinite=nonfinite), numpy_array(part, shape, bound=bound, nonfinite=nonfinite)).map(
            lambda pair: (pair[0] + 1j * pair[1]).astype(dtype)
        )
    elif dtype.kind == "f":
        return _float_elements(dtype, bound, nonfinite, constants, leaf=lambda floats: hnp.arrays(dtype, shape, elements=floats))
    else:
        raise ValueError(f"cannot draw arrays of dtype {dtype_name}")
    return hnp.arrays(dtype, shape, elements=elements)


# ---- from an example --------------------------------------------------------------------------------------


def like(value: Any, *, nan: bool = False, constants: tuple[float, ...] = ()) -> st.SearchStrategy:
    """Values shaped like `value` (see the module docstring)."""
    return with_nonfinite(nan, lambda nonfinite: _like(value, nonfinite, constants))


def _like(value: Any, nonfinite: tuple[float, ...], constants: tuple[float, ...]) -> st.SearchStrategy:
    import jax

    leaves, treedef = jax.tree.flatten(value, is_leaf=_is_key)
    if len(leaves) == 1 and treedef.num_nodes == 1:
        return _leaf_like(leaves[0], nonfinite, constants)
    return st.tuples(*[_leaf_like(leaf, nonfinite, constants) for leaf in leaves]).map(lambda drawn: jax.tree.unflatten(treedef, drawn))


def _is_key(value: Any) -> bool:
    import jax

    return isinstance(value, jax.Array) and jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key)


def _leaf_like(value: Any, nonfinite: tuple[float, ...], constants: tuple[float, ...] = ()) -> st.SearchStrategy:
    import jax

    if _is_key(value):
        data = np.asarray(jax.random.key_data(value))
        impl = str(jax.random.key_impl(value))
        return numpy_array(data.dtype, data.shape, bound=2**31 - 1, low=0).map(lambda d: DrawnKey(d, impl))
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        # The example's own value first (what Hypothesis tries first and shrinks towards): it is one the function
        # accepts, where -1 or 0 may not be (a count of steps, a size).
        return st.sampled_from([value, *sorted({0, 1, -1} - {value} if value >= 1 else {0, -1} - {value})])
    if isinstance(value, float):
        return _float_elements(np.dtype(np.float64), _bound(np.asarray(value)), nonfinite, constants)
    if isinstance(value, (jax.Array, np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype == object:
            return st.just(value)
        low, high = _int_range(array)
        strategy = numpy_array(array.dtype, array.shape, bound=_bound(array), nonfinite=nonfinite, low=low, high=high, constants=constants)
        if isinstance(value, jax.Array):
            return strategy.map(Drawn)
        if isinstance(value, np.generic):
            return strategy.map(lambda a: a[()])
        return strategy
    return st.just(value)


def _bound(array: np.ndarray) -> float:
    """Twice the example's largest finite magnitude, at least 1."""
    if array.dtype.kind not in "fc" and not is_bfloat16(array.dtype):
        return 1.0
    values = np.abs(np.asarray(array, dtype=np.complex128 if array.dtype.kind == "c" else np.float64))
    finite = values[np.isfinite(values)]
    return max(1.0, 2.0 * float(finite.max())) if finite.size else 1.0


def _int_range(array: np.ndarray) -> tuple[int | None, int | None]:
    if array.dtype.kind not in "iu" or array.size == 0:
        return None, None
    high = max(0, int(array.max()), 1)
    return min(-high, int(array.min())), high


def example_call(values: tuple[tuple, dict], *, nan: bool = False, constants: tuple[float, ...] = ()) -> st.SearchStrategy:
    """Calls shaped like one concrete call (args, kwargs)."""
    args, kwargs = values
    return with_nonfinite(
        nan,
        lambda nonfinite: st.tuples(_like(tuple(args), nonfinite, constants), _like(dict(kwargs), nonfinite, constants)).map(
            lambda pair: Call(tuple(pair[0]), dict(pair[1]))
        ),
    )


def concrete_call(values: tuple[tuple, dict]) -> Call:
    """The example itself as a Call, JAX arrays as Drawn (so that each call gets fresh buffers)."""
    import jax

    args, kwargs = values

    def convert(leaf: Any) -> Any:
        if _is_key(leaf):
            return DrawnKey(np.asarray(jax.random.key_data(leaf)), str(jax.random.key_impl(leaf)))
        if isinstance(leaf, jax.Array):
            return Drawn(np.asarray(leaf))
        return leaf

    args, kwargs = jax.tree.map(convert, (tuple(args), dict(kwargs)), is_leaf=_is_key)
    return Call(tuple(args), dict(kwargs))


# ---- from specs -------------------------------------------------------------------------------------------


def from_specs(
    params: tuple[tuple[str, dict[str, Any]], ...],
    positional: int,
    *,
    magnitude: float,
    nan: bool,
    evaluate: Callable[[str], Any],
    constants: tuple[float, ...] = (),
) -> st.SearchStrategy:
    """Calls drawn from per-parameter specs; the first `positional` are passed by position, the rest by
    keyword, and "default" ones are left out."""

    @st.composite
    def calls(draw: Callable, nonfinite: tuple[float, ...]) -> Call:
        scope = _Scope(draw, magnitude, nonfinite, evaluate, constants)
        args, kwargs = [], {}
        for index, (name, spec) in enumerate(params):
            if spec.get("kind") == "default":
                continue
            value = scope.value(spec)
            if index < positional:
                args.append(value)
            else:
                kwargs[name] = value
        return Call(tuple(args), kwargs)

    return with_nonfinite(nan, calls)


def from_call_specs(
    call: dict[str, Any], *, magnitude: float, nan: bool, evaluate: Callable[[str], Any], constants: tuple[float, ...] = ()
) -> st.SearchStrategy:
    """Calls drawn from {"args": [spec, ...], "kwargs": {name: spec}} (a recorded signature)."""

    @st.composite
    def calls(draw: Callable, nonfinite: tuple[float, ...]) -> Call:
        scope = _Scope(draw, magnitude, nonfinite, evaluate, constants)
        args = tuple(scope.value(spec) for spec in call.get("args", []))
        return Call(args, {name: scope.value(spec) for name, spec in call.get("kwargs", {}).items()})

    return with_nonfinite(nan, calls)


class _Scope:
    """One example's draws: named dimensions and the shared shape are drawn once and reused."""

    def __init__(self, draw: Callable, magnitude: float, nonfinite: tuple[float, ...], evaluate: Callable[[str], Any], constants: tuple[float, ...] = ()) -> None:
        self.draw, self.magnitude, self.nonfinite, self.evaluate, self.constants = draw, magnitude, nonfinite, evaluate, constants
        self.dims: dict[str, Any] = {}
        self.shared: tuple[int, ...] | None = None

    def value(self, spec: dict[str, Any]) -> Any:
        kind = spec.get("kind")
        if kind == "array":
            shape = self.shape(spec.get("shape"))
            bound = spec.get("bound", self.magnitude)
            dtype = spec.get("dtype", "float32")
            array = self.draw(numpy_array(dtype, shape, bound=bound, nonfinite=self.nonfinite, low=spec.get("min"), high=spec.get("max"), constants=self.constants))
            return array if spec.get("numpy") else Drawn(array)
        if kind == "float":
            if "min" in spec or "max" in spec:  # a range given by the user is kept: no special values
                bound = spec.get("max", self.magnitude)
                return self.draw(st.floats(min_value=spec.get("min", -bound), max_value=bound, allow_nan=False, allow_infinity=False, allow_subnormal=False))
            return self.draw(_float_elements(np.dtype(np.float64), self.magnitude, self.nonfinite, self.constants))
        if kind == "int":
            if "choices" in spec:
                return self.draw(st.sampled_from(spec["choices"]))
            return self.draw(_int_elements(spec.get("min", -INT_BOUND), spec.get("max", INT_BOUND), self.constants))
        if kind == "bool":
            return self.draw(st.booleans())
        if kind == "key":
            shape = self.shape(spec.get("shape", []))
            data = self.draw(numpy_array(np.uint32, shape + (2,), bound=2**31 - 1, low=0))
            return DrawnKey(data, "threefry2x32")
        if kind == "value":
            return self.evaluate(spec["expr"])
        if kind == "none":
            return None
        if kind in ("tuple", "list"):
            items = [self.value(item) for item in spec.get("items", [])]
            return tuple(items) if kind == "tuple" else items
        if kind == "dict":
            return {key: self.value(item) for key, item in spec.get("items", {}).items()}
        raise ValueError(f"unknown input spec {spec!r}")

    def shape(self, dims: list[Any] | None) -> tuple[int, ...]:
        if dims is None:
            if self.shared is None:
                self.shared = tuple(self.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=MIN_SIDE, max_side=MAX_SIDE)))
            return self.shared
        shape: list[int] = []
        for dim in dims:
            if isinstance(dim, int):
                shape.append(dim)
            elif dim == "_":
                shape.append(self.draw(st.integers(MIN_SIDE, MAX_SIDE)))
            elif dim == "...":
                shape.extend(self.run())
            elif dim.startswith("*"):
                if dim not in self.dims:
                    self.dims[dim] = self.run()
                shape.extend(self.dims[dim])
            else:
                if dim not in self.dims:
                    self.dims[dim] = self.draw(st.integers(MIN_SIDE, MAX_SIDE))
                shape.append(self.dims[dim])
        return tuple(shape)

    def run(self) -> tuple[int, ...]:
        return tuple(self.draw(st.lists(st.integers(MIN_SIDE, MAX_SIDE), max_size=MAX_VARIADIC)))


# ---- on a device ------------------------------------------------------------------------------------------


def materialize(call: Call, device: Any) -> tuple[tuple, dict]:
    """The call's arguments with fresh buffers on `device` (NumPy arrays are copied too: code may mutate them;
    JAX arrays too: a rewrite may donate them, and the next call, or the gradient's, must not find them deleted).
    JAX arrays are made as a user makes them (`jnp.array` under `jax.default_device`), not committed to the
    device with device_put, so that the functions compile as they do for the user (and hit the same caches)."""
    import jax
    import jax.numpy as jnp

    def place(leaf: Any) -> Any:
        if isinstance(leaf, Drawn):
            return jnp.array(leaf.array, copy=True)
        if isinstance(leaf, DrawnKey):
            return jax.random.wrap_key_data(jnp.array(leaf.data, copy=True), impl=leaf.impl)
        if isinstance(leaf, (np.ndarray, jax.Array)):
            return leaf.copy()
        return leaf

    with jax.default_device(device):
        args, kwargs = jax.tree.map(place, (call.args, call.kwargs), is_leaf=lambda x: isinstance(x, (Drawn, DrawnKey)))
    return tuple(args), dict(kwargs)


def hypothesis_one_of(choices: list[st.SearchStrategy]) -> st.SearchStrategy:
    return choices[0] if len(choices) == 1 else st.one_of(choices)
