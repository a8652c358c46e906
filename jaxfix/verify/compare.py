"""When two results count as the same (worker side).

- Pytree structure, and each leaf's shape and dtype, exactly (a Python scalar has the dtype JAX gives it).
- Values within a tolerance that depends on the dtype: integers and bools exact; float64 1e-12, float32 1e-5,
  float16 1e-2 and bfloat16 5e-2 relative, multiplied by log2 of the problem size (the largest input array, or
  the largest int argument: the length of a reduction or of a loop), since rounding error grows with the number
  of operations a value went through. The absolute tolerance is the relative one times the leaf's largest
  magnitude in the original (no floor: a leaf whose values are all near 1e-6 is judged relative to 1e-6), so
  only values near zero relative to their leaf (cancellation) are judged by it: an element whose magnitude is
  above rtol times the leaf's scale can never be off by a relative error of 1 and pass. A leaf of exact zeros
  gets an absolute tolerance of rtol times the square root of the dtype's smallest normal number.
  A case.toml's rtol/atol replace both.
- Gradients get GRADIENT_SLACK times the relative tolerance: a gradient runs the computation backwards too, and
  through an optimisation loop or a fused jit its rounding grows by tens of ulps where the values' does not
  (measured on the corpus: relative errors up to 5e-5 in float32 from fusion alone); a wrong gradient is off by
  far more.
- NaN where NaN, and infinities of the same sign where infinities.
- Both raising an exception of the same type is agreement; one raising, or different types, is a difference.
  (The worker does not ask about inputs on which the original raises: those are outside what the original
  accepts, and a safe fix only has to keep what it computes where it computes something.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

GRADIENT_SLACK = 10.0
BASE_RTOL = {"float64": 1e-12, "float32": 1e-5, "float16": 1e-2, "bfloat16": 5e-2, "complex128": 1e-12, "complex64": 1e-5}


@dataclass
class Outcome:
    """What one call did: a value, or an exception."""

    value: Any = None
    error: BaseException | None = None

    @property
    def raised(self) -> bool:
        return self.error is not None

    def error_name(self) -> str:
        return type(self.error).__name__ if self.error is not None else ""


@dataclass
class Difference:
    message: str  # one line: where and how they differ
    leaf: int | None = None


@dataclass
class Errors:
    """The largest errors seen among the compared leaves (for the report of a verified function)."""

    abs: float = 0.0
    rel: float = 0.0

    def update(self, other: "Errors") -> None:
        self.abs = max(self.abs, other.abs)
        self.rel = max(self.rel, other.rel)


def problem_size(leaves: list[Any]) -> int:
    """The largest array size or int value among the inputs: how long a reduction or loop may run."""
    size = 1
    for leaf in leaves:
        if isinstance(leaf, bool):
            continue
        if isinstance(leaf, (int, np.integer)):
            size = max(size, abs(int(leaf)))
        else:
            array = getattr(leaf, "array", leaf)  # strategies.Drawn
            size = max(size, int(np.size(array)) if hasattr(array, "shape") else 1)
    return size


def tolerance(dtype: np.dtype, size: int) -> float:
    base = BASE_RTOL.get(str(dtype), 1e-5)
    return base * max(1.0, math.log2(max(size, 1)))


def compare(
    original: Outcome,
    rewritten: Outcome,
    *,
    size: int,
    rtol: float | None = None,
    atol: float | None = None,
    slack: float = 1.0,
) -> tuple[Difference | None, Errors]:
    """None when they agree (both raised the same type, or same values), else the first difference."""
    if original.raised or rewritten.raised:
        if original.raised and rewritten.raised and type(original.error) is type(rewritten.error):
            return None, Errors()
        return Difference(_raised_message(original, rewritten)), Errors()
    return compare_values(original.value, rewritten.value, size=size, rtol=rtol, atol=atol, slack=slack)


def _raised_message(original: Outcome, rewritten: Outcome) -> str:
    def describe(outcome: Outcome) -> str:
        if not outcome.raised:
            return "returns"
        return f"raises {outcome.error_name()}: {first_line(outcome.error)}"

    return f"the original {describe(original)}; the rewrite {describe(rewritten)}"


def first_line(error: BaseException | None) -> str:
    text = str(error).strip().splitlines()
    line = text[0] if text else ""
    return line[:200] + ("..." if len(line) > 200 else "")


def compare_values(
    wanted: Any, actual: Any, *, size: int, rtol: float | None = None, atol: float | None = None, slack: float = 1.0
) -> tuple[Difference | None, Errors]:
    import jax

    wanted_leaves, wanted_tree = jax.tree.flatten(wanted)
    actual_leaves, actual_tree = jax.tree.flatten(actual)
    errors = Errors()
    if wanted_tree != actual_tree:
        return Difference(f"pytree structure differs: {wanted_tree} != {actual_tree}"), errors
    for index, (w, a) in enumerate(zip(wanted_leaves, actual_leaves)):
        w_array, a_array = as_array(w), as_array(a)
        if w_array is None or a_array is None:
            if not _same_object(w, a):
                return Difference(f"leaf {index}: {w!r} != {a!r}", index), errors
            continue
        if w_array.shape != a_array.shape:
            return Difference(f"leaf {index}: shape {w_array.shape} != {a_array.shape}", index), errors
        if w_array.dtype != a_array.dtype:
            return Difference(f"leaf {index}: dtype {w_array.dtype} != {a_array.dtype}", index), errors
        difference, leaf_errors = _compare_arrays(w_array, a_array, index, size=size, rtol=rtol, atol=atol, slack=slack)
        errors.update(leaf_errors)
        if difference is not None:
            return difference, errors
    return None, errors


def within_noise(wanted: Any, actual: Any, other: Any, *, factor: float = 2.0) -> bool:
    """Whether `actual` is no farther from `wanted` than `factor` times how far `other` is: `other` is the original
    itself, compiled as one program, so the gap between the two is the rounding noise this input carries. An ill-conditioned gradient (the derivative of a saturated tanh is 1 - tanh**2, a cancellation)
    differs between two correct programs by as much as it differs between the original's own two runs; a
    wrong rewrite differs by more. Per leaf, against that leaf's largest gap; NaN where NaN."""
    import jax

    leaves = [jax.tree.flatten(tree) for tree in (wanted, actual, other)]
    if not (leaves[0][1] == leaves[1][1] == leaves[2][1]):
        return False
    for w, a, o in zip(*(as_array_leaves for as_array_leaves, _ in leaves)):
        w, a, o = as_array(w), as_array(a), as_array(o)
        if w is None or a is None or o is None or not (w.shape == a.shape == o.shape):
            return False
        if not np.issubdtype(w.dtype, np.inexact):
            if not np.array_equal(w, a):
                return False
            continue
        wide = np.complex128 if np.issubdtype(w.dtype, np.complexfloating) else np.float64
        w, a, o = (np.asarray(x, dtype=wide) for x in (w, a, o))
        if _special_mismatch(w, a) is not None:
            return False
        finite = np.isfinite(w) & np.isfinite(o)
        noise = float(np.max(np.abs(o - w)[finite], initial=0.0))
        if np.any(np.abs(a - w)[finite] > factor * noise):
            return False
    return True


def same_layout(wanted: Any, actual: Any) -> bool:
    """Same pytree structure, and the same shape and dtype leaf by leaf: two results that can differ only in values."""
    import jax

    wanted_leaves, wanted_tree = jax.tree.flatten(wanted)
    actual_leaves, actual_tree = jax.tree.flatten(actual)
    if wanted_tree != actual_tree:
        return False
    for w, a in zip(wanted_leaves, actual_leaves):
        w_array, a_array = as_array(w), as_array(a)
        if (w_array is None) != (a_array is None):
            return False
        if w_array is not None and (w_array.shape != a_array.shape or w_array.dtype != a_array.dtype):
            return False
    return True


def comparable(tree: Any) -> bool:
    """Whether every leaf can be read on the host (a tracer that leaked out of a JAX transformation cannot)."""
    import jax

    try:
        for leaf in jax.tree.leaves(tree):
            as_array(leaf)
    except Exception:
        return False
    return True


def _same_object(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return a is b


def as_array(leaf: Any) -> np.ndarray | None:
    """The leaf as a NumPy array with the dtype JAX would give it; None for what is not numeric."""
    import jax
    import jax.numpy as jnp

    if isinstance(leaf, (bool, int, float, complex)) and not isinstance(leaf, np.generic):  # np.float64 is a float
        return np.asarray(jnp.asarray(leaf))
    if isinstance(leaf, jax.Array) and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        return np.asarray(jax.random.key_data(leaf))
    if isinstance(leaf, (jax.Array, np.ndarray, np.generic)):
        array = np.asarray(leaf)
        return None if array.dtype == object else array
    return None


def _special_mismatch(w: np.ndarray, a: np.ndarray) -> tuple[tuple, str] | None:
    """Where NaN or infinity disagree (NaN in one only; an infinity in one only, or of the other sign): the first
    such index and what differs, or None. Finite values are the tolerance's business."""
    w_nan, a_nan = np.isnan(w), np.isnan(a)
    if np.any(w_nan != a_nan):
        return _first(w_nan != a_nan), "NaN in one and not the other"
    w_inf, a_inf = np.isinf(w), np.isinf(a)
    bad = (w_inf != a_inf) | (w_inf & (w != a))
    if np.any(bad):
        return _first(bad), "infinity differs"
    return None


def _compare_arrays(
    wanted: np.ndarray, actual: np.ndarray, index: int, *, size: int, rtol: float | None, atol: float | None, slack: float = 1.0
) -> tuple[Difference | None, Errors]:
    import jax.numpy as jnp

    errors = Errors()
    kind = "c" if jnp.issubdtype(wanted.dtype, jnp.complexfloating) else "f" if jnp.issubdtype(wanted.dtype, jnp.floating) else "x"
    if kind == "x":
        mismatch = wanted != actual
        if np.any(mismatch):
            where = _first(mismatch)
            return Difference(f"leaf {index}: {_at(where)}{_num(wanted[where])} != {_num(actual[where])} (exact, {wanted.dtype})", index), errors
        return None, errors
    w = wanted.astype(np.complex128 if kind == "c" else np.float64)
    a = actual.astype(np.complex128 if kind == "c" else np.float64)
    special = _special_mismatch(w, a)
    if special is not None:
        where, what = special
        return Difference(f"leaf {index}: {_at(where)}{what} ({_num(w[where])} != {_num(a[where])})", index), errors
    finite = np.isfinite(w)
    if not np.any(finite):
        return None, errors
    relative = (rtol if rtol is not None else tolerance(wanted.dtype, size)) * slack
    absolute = atol if atol is not None else absolute_tolerance(wanted, w[finite], relative)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        gap = np.where(finite, np.abs(a - w), 0.0)
        errors.abs = float(np.max(gap))
        ratio = np.where(finite & (np.abs(w) > 0), gap / np.abs(w), 0.0)
    errors.rel = float(np.max(ratio))
    bad = gap > absolute + relative * np.abs(np.where(finite, w, 0.0))
    if np.any(bad):
        where = _first(bad)
        return (
            Difference(
                f"leaf {index}: {_at(where)}{_num(w[where])} != {_num(a[where])} (abs error {gap[where]:.3g}, tolerance "
                f"{absolute + relative * abs(w[where]):.3g}: rtol {relative:.3g}, atol {absolute:.3g})",
                index,
            ),
            errors,
        )
    return None, errors


def absolute_tolerance(wanted: np.ndarray, finite: np.ndarray, relative: float) -> float:
    """rtol times the original leaf's scale (its largest finite magnitude): the original's scale, so that a wild
    rewrite cannot widen it; floored only for a leaf of zeros."""
    try:
        tiny = float(np.finfo(wanted.dtype).tiny)
    except (TypeError, ValueError):  # bfloat16 and other ml_dtypes
        tiny = 1e-38
    scale = float(np.max(np.abs(finite))) if finite.size else 0.0
    return relative * max(scale, math.sqrt(tiny))


def _first(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0]) if mask.ndim else ()


def _at(where: tuple[int, ...]) -> str:
    return f"at {list(where)}: " if where else ""


def _num(value: Any) -> str:
    """A number as a person reads it (NumPy 2's repr says `np.float64(...)`)."""
    if isinstance(value, (complex, np.complexfloating)):
        return f"{complex(value):.7g}"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.7g}"
    if isinstance(value, (np.bool_, bool)):
        return str(bool(value))
    if isinstance(value, (np.integer, int)):
        return str(int(value))
    return repr(value)
