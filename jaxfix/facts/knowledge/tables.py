"""Every library's rows joined into the tables the analyses read. Each library's module says what that library
does; this one only takes unions, so that teaching jaxfix a library is rows in its module and nothing here:

- the transformation families (jit-like, grad-like, vmap-like, other, filtered) with the libraries' own
  transformations placed in the family of the JAX transformation each stands for (`nnx.jit` is jit-like), and
  STAGING, COMPILING, REVERSE_MODE, GRADIENTS likewise;
- LAX_BODIES: JAX's lax control flow and the libraries' versions of it (`hk.scan`);
- what the libraries trace by convention (TRACED_BASES, CONVENTION_WRAPPERS, TRACED_DECORATORS), which attributes
  are static (STATIC_SELF, STRUCT_*, STATIC_FIELDS), which annotations mean an array, what calls return
  (CALL_SUMMARIES and the types the summaries are keyed by).
"""

from __future__ import annotations

from jaxfix.facts.knowledge import chex, environments, equinox, flax, haiku, jax, jaxtyping, optax
from jaxfix.facts.knowledge.summary import CallSummary

# ---- transformations -----------------------------------------------------------------------------------------
TRANSFORM_ALIASES: dict[str, str] = {**flax.TRANSFORM_ALIASES, **haiku.TRANSFORM_ALIASES, **equinox.TRANSFORM_ALIASES}
FILTERED = frozenset(equinox.FILTERED_TRANSFORMS)
# Every library transformation → the JAX transformation it stands for, filtered ones included.
STANDS_FOR: dict[str, str] = {**TRANSFORM_ALIASES, **equinox.FILTERED_TRANSFORMS}


def _aliases_in(family: frozenset[str]) -> frozenset[str]:
    return family | {alias for alias, like in TRANSFORM_ALIASES.items() if like in family}


def _standing_for(family: frozenset[str]) -> frozenset[str]:
    return family | {name for name, like in STANDS_FOR.items() if like in family}


JIT_LIKE = _aliases_in(jax.JIT_LIKE)
GRAD_LIKE = _aliases_in(jax.GRAD_LIKE)
VMAP_LIKE = _aliases_in(jax.VMAP_LIKE)
OTHER_TRANSFORMS = jax.OTHER_TRANSFORMS | (frozenset(TRANSFORM_ALIASES) - JIT_LIKE - GRAD_LIKE - VMAP_LIKE)
TRANSFORMS = JIT_LIKE | GRAD_LIKE | VMAP_LIKE | OTHER_TRANSFORMS | FILTERED
STAGING = _standing_for(jax.STAGING)
COMPILING = _standing_for(jax.COMPILING)
# Reverse mode: JAX's and Equinox's filtered gradients (the NNX and Haiku gradients are not listed yet).
REVERSE_MODE = jax.REVERSE_MODE | {name for name, like in equinox.FILTERED_TRANSFORMS.items() if like in jax.REVERSE_MODE}
GRADIENTS = _standing_for(jax.GRADIENTS)
# Wrappers whose result is a compiled callable, dispatched asynchronously: pjit is a jit, and so are the libraries'.
COMPILED_CALLABLES = jax.JIT_LIKE | flax.COMPILED_CALLABLES | equinox.COMPILED_CALLABLES
DONATION_KEYWORDS: dict[str, tuple[str, ...]] = {
    **jax.DONATION_KEYWORDS, **flax.DONATION_KEYWORDS, **equinox.DONATION_KEYWORDS
}  # fmt: skip
LAX_BODIES: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    **jax.LAX_BODIES, **flax.BODY_ALIASES, **haiku.BODY_ALIASES
}  # fmt: skip

# ---- what the libraries trace by convention --------------------------------------------------------------------
CONVENTION_WRAPPERS: dict[str, tuple[int, ...]] = {**haiku.CONVENTION_WRAPPERS, **optax.CONVENTION_WRAPPERS}
CONVENTION_ARITY = optax.CONVENTION_ARITY
TRACED_BASES: dict[str, tuple[str, ...]] = {
    **flax.TRACED_BASES, **haiku.TRACED_BASES, **equinox.TRACED_BASES, **environments.TRACED_BASES
}  # fmt: skip
TRACED_DECORATORS = flax.TRACED_DECORATORS | haiku.TRACED_DECORATORS
STATIC_SELF = flax.STATIC_SELF | haiku.STATIC_SELF
PYTREE_MODULES = flax.PYTREE_MODULES
STRUCT_DATACLASSES = flax.STRUCT_DATACLASSES | chex.STRUCT_DATACLASSES
STRUCT_FIELDS = flax.STRUCT_FIELDS | equinox.STRUCT_FIELDS | chex.STRUCT_FIELDS
STATIC_FIELDS = flax.STATIC_FIELDS | equinox.STATIC_FIELDS

# ---- annotations that mean an array ----------------------------------------------------------------------------
# One array wherever the parameter is (resolved names); NumPy's only where JAX traces the parameter.
ARRAY_ANNOTATIONS = jax.ARRAY_ANNOTATIONS | jaxtyping.ARRAY_ANNOTATIONS | chex.ARRAY_ANNOTATIONS
TRACED_ARRAY_ANNOTATIONS = jax.TRACED_ARRAY_ANNOTATIONS
# By the last part of the name alone, where an annotation is read without resolving imports (a truth test's
# evidence of an array): `x: jax.Array`, `x: jnp.ndarray`, `x: Array`; a bare `ArrayLike` too (a typing alias of
# jax.typing imported by name), though not `jax.typing.ArrayLike` spelled out, which also admits Python scalars.
ARRAY_ANNOTATION_NAMES = frozenset({"Array", "ndarray"})
BARE_ARRAY_ANNOTATION_NAMES = ARRAY_ANNOTATION_NAMES | {"ArrayLike"}
# By the last part of the name, as the verifier reads an annotation to draw an input for it (from the source,
# with no import resolved): JAX's array types (`DeviceArray`, JAX's before `jax.Array`), NumPy's (under a NumPy
# name: `np.ndarray`, `npt.NDArray`), and PRNG keys (jaxtyping's `PRNGKeyArray`, `jax.random.KeyArray`).
DRAWN_ARRAY_NAMES = frozenset({"Array", "ArrayLike", "DeviceArray"})
DRAWN_NUMPY_ARRAY_NAMES = frozenset({"ndarray", "NDArray"})
# The first part of an annotation that names NumPy's array: NumPy's usual import names, or the class itself.
DRAWN_NUMPY_ROOTS = frozenset({"np", "numpy", "npt"}) | DRAWN_NUMPY_ARRAY_NAMES
KEY_ANNOTATION_NAMES = frozenset({"PRNGKeyArray", "KeyArray"})

# ---- what library calls return ---------------------------------------------------------------------------------
CALL_SUMMARIES: dict[str, CallSummary] = {
    **optax.CALL_SUMMARIES, **equinox.CALL_SUMMARIES, **flax.CALL_SUMMARIES, **haiku.CALL_SUMMARIES
}  # fmt: skip
# The types the summaries of methods are keyed by (`haiku.Transformed.apply`), told from the call that made the
# receiver (CONSTRUCTED_TYPES), the module of that call (CONSTRUCTED_BY_MODULE) or the receiver's class' base.
CONSTRUCTED_TYPES = haiku.CONSTRUCTED_TYPES
CONSTRUCTED_BY_MODULE: dict[str, str] = {**optax.CONSTRUCTED_BY_MODULE, **flax.CONSTRUCTED_BY_MODULE}
INSTANCE_TYPES = flax.INSTANCE_TYPES
TYPE_FIELDS = haiku.TYPE_FIELDS
# Methods by whose name alone a call is taken to update a model or an optimizer's state (`state.apply_gradients`,
# `state.replace`, `tx.update`, `optax.apply_updates` reached as an attribute).
UPDATE_METHOD_NAMES = frozenset({"apply_gradients", "update", "apply_updates", "replace"})
