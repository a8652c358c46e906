"""Which library call summary (`CALL_SUMMARIES` of `jaxfix.facts.knowledge.tables`) applies at a call, on `ast`:
a library function by its qualified name, a method of a receiver whose type the call that made it tells, or a
method recognised by its name alone. A summarised call is pure (`jaxfix.facts.purity` reads this).

The answers are those of `analysis.summaries.summary_of` and `by_method_name` on LibCST (which the LibCST rules
still read), with the binder's scopes for LibCST's: a name "bound once" is one whose scope that answers it holds
exactly one binding of it. What donation (JF501, `facts.donation`) asks of them is here too: whether a call marks a
training step (TRAINING_CALLS, TRAINING_METHODS), whether its result holds an argument's arrays or only new ones
(`holds_argument`, `fresh_result`), whether an optimizer's state keeps the parameters (`init_keeps_params`)."""

from __future__ import annotations

import ast

from jaxfix.facts.binder import Binder
from jaxfix.facts.knowledge import optax, tables
from jaxfix.facts.knowledge.summary import CallSummary
from jaxfix.facts.knowledge.tables import CALL_SUMMARIES
from jaxfix.facts.spelling import in_order, value_of

# The summaries of methods recognised by their name alone, by that name (the first where two share one).
BY_METHOD_NAME: dict[str, tuple[str, CallSummary]] = {}
for _name, _summary in CALL_SUMMARIES.items():
    if _summary.by_method_name:
        BY_METHOD_NAME.setdefault(_name.rsplit(".", 1)[1], (_name, _summary))

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_OPTIMIZER = "optax.GradientTransformation"

# What marks a training step: a gradient taken in its body, or an optimizer's update applied (by qualified name,
# or by method name where the receiver's type cannot be seen).
TRAINING_CALLS = tables.GRADIENTS | {
    name for name, summary in CALL_SUMMARIES.items() if summary.updates and not summary.by_method_name
}
TRAINING_METHODS = frozenset(
    name.rsplit(".", 1)[1] for name, summary in CALL_SUMMARIES.items() if summary.updates and summary.by_method_name
)


def by_method_name(call: ast.Call) -> tuple[str, CallSummary] | None:
    """The summary of a method recognised by its name alone (`state.apply_fn(...)`), whatever the receiver."""
    if type(call.func) is not ast.Attribute:
        return None
    return BY_METHOD_NAME.get(call.func.attr)


class Summaries:
    """`summary_of` for the calls of one module."""

    def __init__(self, binder: Binder) -> None:
        self.binder = binder
        self._attributes: dict[str, object] = {}

    def summary_of(self, call: ast.Call) -> tuple[str, CallSummary] | None:
        """The summary that applies to `call` and its name: a library function by its qualified name, or a method
        of a receiver whose type the call that made it tells (CONSTRUCTED_TYPES), bound once; or a field of such a
        named tuple unpacked into names (`init, apply = hk.transform(f)`)."""
        name = self.binder.qualified(call.func)
        if name in CALL_SUMMARIES:
            return name, CALL_SUMMARIES[name]
        method = self._method_name(call.func)
        if method in CALL_SUMMARIES:
            return method, CALL_SUMMARIES[method]
        return None

    def holds_argument(self, call: ast.Call, argument: ast.AST, output: int | None = None) -> bool | None:
        """Whether the result of `call` (its output number `output`, None: all of it) may hold the arrays of
        `argument`, one of its arguments, as they are: None when no summary tells. An optax optimizer's `init` makes
        new arrays only for FRESH_INIT_OPTIMIZERS."""
        found = self.summary_of(call)
        if found is None:
            return None
        name, summary = found
        parameter = _parameter_of(call, argument, summary)
        if parameter is None:
            return None
        if name == f"{_OPTIMIZER}.init":
            return not self._fresh_init(self._optimizer(call.func.value))
        return parameter in summary.output_aliases(output)

    def fresh_result(self, call: ast.Call, output: int | None = None) -> bool:
        """Whether the result of `call` (its output number `output`, None: all of it) holds only new arrays, none of
        its arguments' (summaries say so)."""
        found = self.summary_of(call)
        if found is None:
            return False
        arguments = in_order(call)
        return all(self.holds_argument(call, value_of(a), output) is False for a in arguments) and (
            bool(arguments) or not found[1].output_aliases(output)
        )

    def init_keeps_params(self, call: ast.Call) -> bool | None:
        """For an optax optimizer's `init` call: True when its state holds the parameters' own arrays (one of
        PARAMS_KEEPING_OPTIMIZERS, alone or in an `optax.chain`), False when it makes only new arrays, None when
        jaxfix cannot tell (not an `init` of a known optimizer)."""
        found = self.summary_of(call)
        if found is None or found[0] != f"{_OPTIMIZER}.init":
            return None
        constructor = self._optimizer(call.func.value)
        if self._fresh_init(constructor):
            return False
        return True if self._keeps_params(constructor) else None

    def _optimizer(self, receiver: ast.AST) -> ast.Call | None:
        """The `optax.X(...)` call that made `receiver` (see `_made_by`), else None."""
        bound = self._made_by(receiver)
        if type(bound) is not ast.Call or self._type_of(bound) != _OPTIMIZER:
            return None
        return bound

    def _keeps_params(self, constructor: ast.Call | None) -> bool:
        """Whether one of the optimizers `constructor` combines keeps the parameters' arrays in its state."""
        return any(name in optax.PARAMS_KEEPING_OPTIMIZERS for name in self._combined(constructor))

    def _fresh_init(self, constructor: ast.Call | None) -> bool:
        """Whether every one of the optimizers `constructor` combines has an `init` that makes new arrays only."""
        return all(name in optax.FRESH_INIT_OPTIMIZERS for name in self._combined(constructor))

    def _combined(self, constructor: ast.Call | None, depth: int = 0) -> list[str | None]:
        """The optimizers an optax constructor call makes, by qualified name: its own, or those that the calls given
        to a combinator (`optax.chain(optax.clip(1.0), optax.adam(lr))`) make. None stands for what is not known: no
        call, an argument passed by keyword or star, nesting past 4 levels."""
        if constructor is None or depth > 4:
            return [None]
        name = self.binder.qualified(constructor.func)
        if name not in optax.FRESH_INIT_COMBINATORS:
            return [name]
        found: list[str | None] = []
        for argument in in_order(constructor):
            if type(argument) in (ast.keyword, ast.Starred):
                found.append(None)
            value = value_of(argument)
            found.extend(self._combined(value, depth + 1) if type(value) is ast.Call else [None])
        return found

    def _method_name(self, func: ast.AST) -> str | None:
        if type(func) is ast.Attribute:
            made = self._type_of(self._made_by(func.value))
            return f"{made}.{func.attr}" if made else None
        bound = self._binding(func) if type(func) is ast.Name else None
        if isinstance(bound, tuple):
            value, index = bound
            made = self._type_of(value)
            fields = tables.TYPE_FIELDS.get(made or "", ())
            return f"{made}.{fields[index]}" if index < len(fields) else None
        return None

    def _type_of(self, made_by, depth: int = 0) -> str | None:
        if depth > 4 or made_by is None or isinstance(made_by, tuple):
            return None
        if isinstance(made_by, _DEFS):
            for decorator in made_by.decorator_list:  # the outermost decides
                made = tables.CONSTRUCTED_TYPES.get(self.binder.qualified(decorator) or "")
                if made != "=":
                    return made
            return None
        if type(made_by) is not ast.Call:
            return None
        cls = self._binding(made_by.func) if type(made_by.func) is ast.Name else None
        if type(cls) is ast.ClassDef:
            return self._instance_type(cls, depth + 1)
        name = self.binder.qualified(made_by.func) or ""
        made = tables.CONSTRUCTED_TYPES.get(name)
        if made == "=":
            first = _first_positional(made_by)
            if first is None:
                return None
            inner = first if type(first) is ast.Call else self._binding(first)
            return self._type_of(inner, depth + 1)
        if made is not None:
            return made
        return next((t for prefix, t in tables.CONSTRUCTED_BY_MODULE.items() if name.startswith(prefix)), None)

    def _instance_type(self, cls: ast.ClassDef, depth: int) -> str | None:
        for base in cls.bases:
            if type(base) is ast.Starred:
                continue
            made = tables.INSTANCE_TYPES.get(self.binder.qualified(base) or "")
            if made is None and depth < 4 and type(base) is ast.Name:
                parent = self._binding(base)
                made = self._instance_type(parent, depth + 1) if type(parent) is ast.ClassDef else None
            if made is not None:
                return made
        return None

    def _made_by(self, receiver: ast.AST):
        return receiver if type(receiver) is ast.Call else self._binding(receiver)

    def _binding(self, receiver: ast.AST):
        """What the name `receiver`, bound once in its scope, is bound to: the value of `receiver = value`, a
        decorated def, a class, or (value, index) for `a, receiver = value`; for `self.attr`, the value of the
        module's one store to an attribute of that name. Else None."""
        if type(receiver) is ast.Attribute and type(receiver.value) is ast.Name and receiver.value.id == "self":
            return self._attribute_binding(receiver.attr)
        if type(receiver) is not ast.Name:
            return None
        scope = self.binder.scope_of.get(receiver)
        if scope is None:
            return None
        bindings = scope.resolve(receiver.id)
        if len(bindings) != 1 or bindings[0].node is None:
            return None
        node = bindings[0].node
        if type(node) is ast.ClassDef:
            return node
        if isinstance(node, _DEFS):
            return node if node.decorator_list else None
        if type(node) is not ast.Name:
            return None
        parents = self.binder.parents
        parent = parents.get(node)
        if type(parent) is ast.Tuple:
            assign = parents.get(parent)
            if not (type(assign) is ast.Assign and len(assign.targets) == 1 and assign.targets[0] is parent):
                return None
            if type(assign.value) is not ast.Call:
                return None
            if any(type(e) is not ast.Name for e in parent.elts):
                return None  # `*rest`, nested unpacking
            return assign.value, next(i for i, e in enumerate(parent.elts) if e is node)
        if not (type(parent) is ast.Assign and len(parent.targets) == 1 and parent.targets[0] is node):
            return None
        return parent.value

    def _attribute_binding(self, attribute: str):
        if attribute in self._attributes:
            return self._attributes[attribute]
        found = self._attributes[attribute] = self._attribute_store(attribute)
        return found

    def _attribute_store(self, attribute: str):
        parents = self.binder.parents
        stores = []
        for node in self.binder.nodes_of(ast.Attribute):
            if node.attr != attribute:
                continue
            parent = parents.get(node)
            kind = type(parent)
            if kind is ast.Assign and any(t is node for t in parent.targets):
                stores.append(parent)
            elif kind in (ast.AugAssign, ast.AnnAssign) and parent.target is node:
                stores.append(parent)
            elif kind in (ast.List, ast.Set, ast.Delete) or (kind is ast.Tuple and not _bare_slice(parent, parents)):
                return None  # stored by unpacking or deleted (LibCST's Element, Del)
        if len(stores) != 1 or type(stores[0]) is not ast.Assign or len(stores[0].targets) != 1:
            return None
        return stores[0].value


def _parameter_of(call: ast.Call, argument: ast.AST, summary: CallSummary) -> str | None:
    """The summary's parameter that `argument` is passed to (past the named ones, "*args" and "**kwargs" where the
    summary has them); None after a `*`/`**` argument."""
    positional = [p for p in summary.parameters if p not in ("self", "*args", "**kwargs")]
    index = 0
    for written in in_order(call):
        kind = type(written)
        if kind is ast.Starred or (kind is ast.keyword and written.arg is None):
            return None
        if value_of(written) is argument:
            if kind is ast.keyword:
                if written.arg not in positional and "**kwargs" in summary.parameters:
                    return "**kwargs"
                return written.arg
            if index < len(positional):
                return positional[index]
            return "*args" if "*args" in summary.parameters else None
        if kind is not ast.keyword:
            index += 1
    return None


def _bare_slice(node: ast.Tuple, parents: dict) -> bool:
    """Whether a tuple is the unparenthesized index of a subscript (`a[i, j]`: LibCST's subscript elements)."""
    parent = parents.get(node)
    if type(parent) is not ast.Subscript or parent.slice is not node or not node.elts:
        return False
    first = node.elts[0]
    return (node.lineno, node.col_offset) == (first.lineno, first.col_offset)


def _first_positional(call: ast.Call) -> ast.AST | None:
    """The first argument as written when it is positional and not starred (LibCST's `args[0]`)."""
    first = min([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset), default=None)
    if first is None or type(first) is ast.keyword or type(first) is ast.Starred:
        return None
    return first
