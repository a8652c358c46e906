"""How code built on these libraries is written, by convention: which methods of a traced class construct it
rather than compute, and which parameters of a conventionally traced function hold Python values."""

from __future__ import annotations

# Methods that construct or describe a module (or an environment) rather than compute with it.
UNTRACED_METHODS = frozenset(
    {"__init__", "__post_init__", "setup", "__repr__", "__str__", "__hash__", "__eq__", "__getattr__",
     "__setattr__", "__init_subclass__", "__new__", "__getstate__", "__setstate__", "tree_flatten",
     "tree_unflatten", "observation_space", "action_space", "state_space", "name", "num_actions",
     "default_params", "observation_spec", "action_spec", "render", "close", "__enter__", "__exit__"}
)  # fmt: skip
# Parameters of a conventionally traced function that hold Python values, not arrays: by name, or by annotation.
FLAG_PARAMETERS = frozenset(
    {"train", "training", "is_training", "deterministic", "decode", "use_running_average", "mutable", "method",
     "rngs", "mode", "inference", "return_state", "return_aux", "verbose", "debug", "capture_intermediates",
     "config", "cfg", "hparams", "name"}
)  # fmt: skip
PYTHON_TYPES = frozenset({"bool", "int", "str", "float", "Callable", "Sequence", "Tuple", "tuple", "list", "List",
                          "dict", "Dict", "Optional", "Any", "type", "Type"})  # fmt: skip
