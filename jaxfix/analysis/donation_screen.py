"""The `ast` screen of donation (JF501): whether a module may hold a compiled training step whose calls all rebind
one of its arguments from its result, as `jaxfix.analysis.donation` would find it (a superset of its answer)."""

from __future__ import annotations

import ast

from jaxfix.analysis.donation import _COMPILERS
from jaxfix.analysis.screen import ast_target_names, node_binds, statement_blocks
from jaxfix.analysis.summaries import TRAINING_CALLS, TRAINING_METHODS

_PARTIAL = "functools.partial"


def may_donate(screen) -> bool:
    """A finding needs a function (module-level, a method, or defined in a function's body) with one decorator that
    may be `jax.jit`/`jax.pmap` or a `partial` of one, or such a `name = jax.jit(fn, ...)` of an undecorated
    def, with no donation keyword and no `*args`, whose body returns a value and takes a gradient or applies
    an optimizer's update (`DonationAnalysis._trains`); and calls of its name that may all rebind one
    parameter's variable from one output (`p = step(p, x)`, `p, s = step(p, s)`, `new, s = step(p, s)` before
    `p = new`, `self.p, m = self.update(self.p, x)`), as `_CallSites` reads them: `loss = step(model, x)` or
    `_ = step(p, s)` among the calls, the step passed as a value or bound twice, stop it."""
    may = screen.may_resolve_to
    tree = screen.tree
    functions = screen.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef)
    defs: dict[str, list[ast.AST]] = {}
    for function in functions:
        defs.setdefault(function.name, []).append(function)

    def steps(function: ast.AST) -> bool:
        return function.args.vararg is None and _returns_and_trains(function, may)

    compilers = set(_COMPILERS)
    candidates: list[tuple[str, ast.AST, ast.AST]] = []  # (the name calls call, the def, where it is bound)
    classes = screen.nodes_of(ast.ClassDef)
    for owner in (tree, *functions, *classes):
        for stmt in owner.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and len(stmt.decorator_list) == 1:
                decorator = stmt.decorator_list[0]
                if may(decorator.func if isinstance(decorator, ast.Call) else decorator, compilers | {_PARTIAL}):
                    if not _donates(decorator) and steps(stmt):
                        candidates.append((stmt.name, stmt, owner))
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                value = stmt.value
                if isinstance(value, ast.Call) and may(value.func, compilers) and not _donates(value) and value.args:
                    first = value.args[0]
                    if isinstance(first, ast.Name):
                        for function in defs.get(first.id, ()):
                            if not function.decorator_list and steps(function):
                                candidates.append((stmt.targets[0].id, function, owner))
    if not candidates:
        return False
    sites = _CallSites(screen)
    return any(sites.may_rebind(name, function, owner) for name, function, owner in candidates)


def _donates(call: ast.expr) -> bool:
    """`jax.jit(..., donate_argnums=...)`, `partial(jax.jit, donate_argnames=...)`: a keyword that
    `DonationAnalysis.donatable` skips."""
    return isinstance(call, ast.Call) and any(k.arg in ("donate_argnums", "donate_argnames") for k in call.keywords)


def _returns_and_trains(function: ast.AST, may) -> bool:
    """Whether `function` returns a value and may take a gradient or apply an optimizer's update (a superset of
    `DonationAnalysis._trains`, which a proof of the update also needs: it reads `jax.grad`/
    `jax.value_and_grad`)."""
    returns = trains = False
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            returns = True
        elif isinstance(node, (ast.Name, ast.Attribute)) and not trains:
            trains = may(node, TRAINING_CALLS) or isinstance(node, ast.Attribute) and node.attr in TRAINING_METHODS
        if returns and trains:
            return True
    return False


class _CallSites:
    """The calls of a candidate step that the rule would see (`call_sites`, `_method_call_sites`), as far as the
    `ast` tells them, and whether they can all rebind one argument from the result
    (`DonationAnalysis._site`).
    Scopes are told apart by positions (a node lies in a scope whose span holds it), with no walk of the tree:
    walking each candidate's scope cost 0.05 s of CPU over the 10 real trees, twice what the rule's other screen
    work costs."""

    def __init__(self, screen) -> None:
        self.screen = screen
        self._values: dict[int, ast.Assign] | None = None
        self._blocks: dict[int, tuple[list[ast.stmt], int]] | None = None

    def may_rebind(self, name: str, function: ast.AST, owner: ast.AST) -> bool:
        """Whether the step `function`, called `name` and bound in `owner`'s body, may have call sites that all
        rebind one of its parameters. The calls looked at are some of those the rule sees (all of them for a
        method): where one of them rebinds no parameter that the others rebind too, the rule finds nothing."""
        arguments = function.args
        params = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        if isinstance(owner, ast.ClassDef):
            if owner not in self.screen.tree.body or not function.decorator_list or params[:1] != ["self"]:
                return False  # `jitted_methods`: a def (not `name = jax.jit(fn)`) of a module-level class, `self` first
            calls = self._method_calls(name)
            return bool(calls) and self._rebind_one(calls, params, 1)
        named = [node for node in self.screen.nodes_of(ast.Call) if type(node.func) is ast.Name and node.func.id == name]
        if not any(self._position(call, index, param) is not None for call in named for index, param in enumerate(params)):
            return False  # no call of the name anywhere rebinds a parameter
        calls = self._calls_in_scope(name, owner, named)
        if calls is None:
            return False
        return self._rebind_one(calls, params, 0) if calls else True  # none known to be the rule's: any may be

    def _method_calls(self, name: str) -> list[ast.Call]:
        """`_method_call_sites`: every `x.name` of the module, where each must be a call `self.name(...)` (the rule
        follows none otherwise: empty)."""
        attributes = [
            node for node in self.screen.nodes_of(ast.Attribute)
            if node.attr == name and isinstance(node.value, ast.Name)
        ]
        calls = [
            node for node in self.screen.nodes_of(ast.Call)
            if isinstance(node.func, ast.Attribute) and node.func.attr == name and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
        ]
        return calls if len(calls) == len(attributes) else []

    def _calls_in_scope(self, name: str, owner: ast.AST, named: list[ast.Call]) -> list[ast.Call] | None:
        """Those of `named`, the calls `name(...)`, that LibCST's scopes surely resolve to `owner`'s binding of
        the name: in `owner`'s body, in no nested scope that may bind the name itself. None where the rule
        surely finds nothing: `owner` binds the name twice (`step = jax.jit(step)`), or reads it other than as
        a callee (the step passed as a value: `call_sites` gives up). Empty where no call is surely the rule's."""
        screen = self.screen
        if any(name in node.names for node in screen.nodes_of(ast.Global, ast.Nonlocal)):
            return []  # a binding in another scope: LibCST's answer is not followed here
        span = None if owner is screen.tree else (_start(owner.body[0]), _end(owner.body[-1]))

        def inside(node: ast.AST, outer: tuple | None) -> bool:
            return outer is None or outer[0] <= _start(node) and _end(node) <= outer[1]

        scopes = [node for node in screen.nodes_of(*_SCOPES) if node is not owner and inside(node, span)]
        binders = [
            node for node in (
                *screen.nodes_of(ast.Name), *screen.nodes_of(ast.arg), *screen.nodes_of(*_NAMED_SCOPES),
                *screen.nodes_of(ast.Import, ast.ImportFrom), *screen.nodes_of(ast.ExceptHandler),
                *screen.nodes_of(ast.MatchAs, ast.MatchStar, ast.MatchMapping),
            ) if node_binds(node, name)  # no global/nonlocal among them
        ]
        spans = [(_start(scope), _end(scope), scope) for scope in scopes]
        shadowing = [
            (first, last) for first, last, scope in spans
            if any(first <= _start(b) and _end(b) <= last for b in binders if b is not scope)
            or type(scope) in _NAMED_SCOPES and scope.name == name  # bound around it, not in it: left out all the same
        ]

        def resolved(node: ast.AST) -> bool:
            return inside(node, span) and not any(first <= _start(node) and _end(node) <= last for first, last in shadowing)

        calls = [call for call in named if resolved(call)]
        callees = {id(call.func) for call in calls}
        loads = (n for n in screen.nodes_of(ast.Name) if n.id == name and type(n.ctx) is ast.Load and id(n) not in callees)
        if any(resolved(n) for n in loads):
            return None
        own = [  # the bindings of `owner`'s own scope that LibCST surely counts: defs, classes, `=` and `for` targets
            node for node in (
                *(s for s in scopes if type(s) in _NAMED_SCOPES and s.name == name),
                *(a for a in screen.nodes_of(ast.Assign) if any(name in ast_target_names(t) for t in a.targets)),
                *(f for f in screen.nodes_of(ast.For, ast.AsyncFor) if name in ast_target_names(f.target)),
            ) if inside(node, span) and not any(
                first <= _start(node) and _end(node) <= last for first, last, scope in spans if scope is not node
            )
        ]
        return None if len(own) > 1 else calls

    def _rebind_one(self, calls: list[ast.Call], params: list[str], offset: int) -> bool:
        """Whether some parameter (past `offset`, the static `self`) is rebound by every call, from one output."""
        for index in range(offset, len(params)):
            positions = set()
            for call in calls:
                position = self._position(call, index - offset, params[index])
                if position is None:
                    break
                positions.add(position)
            else:
                if len(positions) == 1:
                    return True
        return False

    def _position(self, call: ast.Call, index: int, param: str) -> int | None:
        """`DonationAnalysis._site`'s position where it may find a site (the caller's scopes aside): which output
        of the call rebinds the variable passed for `param`, at `index` or by keyword (0: the whole result)."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        keyword = next((k for k in call.keywords if k.arg == param), None)
        arg = keyword.value if keyword is not None else call.args[index] if index < len(call.args) else None
        if self._values is None:
            self._values = {
                id(a.value): a for a in self.screen.nodes_of(ast.Assign) if len(a.targets) == 1 and type(a.value) is ast.Call
            }
        assign = self._values.get(id(call))
        if arg is None or assign is None:
            return None
        target = assign.targets[0]
        others = [a for a in (*call.args, *(k.value for k in call.keywords)) if a is not arg]
        attribute = _ast_self_attribute(arg)
        if attribute is not None:  # `_attribute_site`
            if any(_ast_self_attribute(n) == attribute for other in others for n in ast.walk(other)):
                return None
            if isinstance(target, (ast.Tuple, ast.List)):
                if any(isinstance(e, ast.Starred) for e in target.elts):
                    return None
                hits = [i for i, e in enumerate(target.elts) if _ast_self_attribute(e) == attribute]
                return hits[0] + 1 if len(hits) == 1 else None
            return 0 if _ast_self_attribute(target) == attribute else None
        if not isinstance(arg, ast.Name):
            return None
        variable = arg.id
        if any(isinstance(n, ast.Name) and n.id == variable for other in others for n in ast.walk(other)):
            return None  # passed twice
        position = _ast_position(target, variable)
        if position is not None:
            return position
        return self._relayed(assign, variable)

    def _relayed(self, assign: ast.Assign, variable: str) -> int | None:
        """`_relay`: `new, m = step(p, b)` followed by `a = new` statements, one of which is `p = new`: the position
        of `new` in the target."""
        target = assign.targets[0]
        bound = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        bound |= {n.attr for n in ast.walk(target) if isinstance(n, ast.Attribute)}  # LibCST's `attr` is a Name
        if not any(_relay_of(a, variable, bound) for a in self.screen.nodes_of(ast.Assign)):
            return None  # no `p = new` anywhere: the statements after the call need not be found
        if self._blocks is None:
            self._blocks = {}
            blocks = [self.screen.tree.body]
            while blocks:
                block = blocks.pop()
                for at, statement in enumerate(block):
                    self._blocks[id(statement)] = (block, at)
                    blocks.extend(statement_blocks(statement))
        block, at = self._blocks[id(assign)]
        for following in block[at + 1:]:
            if not _relay_of(following, None, bound):
                return None
            if following.targets[0].id == variable:
                new = following.value.id
                return None if new == variable else _ast_position(target, new)
        return None


def _relay_of(statement: ast.AST, variable: str | None, bound: set[str]) -> bool:
    """Whether `statement` is `a = new` with `new` among `bound` (and `a` being `variable`, where given)."""
    return (
        type(statement) is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name
        and type(statement.value) is ast.Name and statement.value.id in bound
        and (variable is None or statement.targets[0].id == variable)
    )


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _end(node: ast.AST) -> tuple[int, int]:
    return node.end_lineno, node.end_col_offset


_NAMED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SCOPES = frozenset({*_NAMED_SCOPES, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp})


def _ast_self_attribute(expr: ast.AST) -> str | None:
    """`attr` for the expression `self.attr`, else None (`_self_attribute` on the `ast`)."""
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        return expr.attr
    return None


def _ast_position(target: ast.expr, name: str) -> int | None:
    """`DonationAnalysis._position` on the `ast`: 0 when the target is `name`; n when `name` is its n-th
    element."""
    if isinstance(target, ast.Name):
        return 0 if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
        hits = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == name]
        return hits[0] + 1 if len(hits) == 1 else None
    return None
