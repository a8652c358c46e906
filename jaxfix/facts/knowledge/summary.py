"""The shape of one row of the libraries' call summaries: what a call returns, in structure and shape terms."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CallSummary:
    """What one library call returns, in structure and shape terms (checked against the library's source). Every
    call summarised is pure: it returns new values and changes neither its arguments nor its receiver (a loop body
    that calls it can become a lax loop's body)."""

    parameters: tuple[str, ...]  # its positional parameters; a method's receiver is "self"
    returns: tuple[str, ...]  # per output (one for a single value): the parameter whose pytree structure, leaf
    #                           shapes and dtypes it has, or "" where that is not known
    aliases: tuple[str, ...]  # the parameters whose arrays the result may hold as they are (not new buffers)
    updates: bool = False  # applies an optimizer's update: marks a training step, whose output is the new state
    by_method_name: bool = False  # a method recognised by its name alone: the receiver is a step's parameter
    #                              whose type cannot be seen (`state.apply_gradients(grads=g)`)
    by_output: tuple[tuple[str, ...], ...] = ()  # per output, where outputs differ: the parameters whose arrays
    #                                              that output may hold (`aliases` is their union)
    array_unless: tuple[str, ...] | None = None  # evidence, not proof: the output is one array by convention
    #                                              (a model's logits), unless a keyword named here is passed

    def output_aliases(self, output: int | None) -> tuple[str, ...]:
        """The parameters whose arrays output `output` (None: the whole result) may hold as they are."""
        return self.by_output[output] if output is not None and self.by_output else self.aliases
