"""Renderers: turn engine results into what a person (or a tool) reads."""
