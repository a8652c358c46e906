"""What the reinforcement-learning environment libraries (gymnax, brax, jumanji) trace by convention: an
environment's `step` and `reset` are jitted by every trainer built on them."""

from __future__ import annotations

TRACED_BASES: dict[str, tuple[str, ...]] = {
    "gymnax.environments.environment.Environment": ("step", "reset", "step_env", "reset_env", "get_obs"),
    "brax.envs.base.Env": ("step", "reset"),
    "brax.envs.base.PipelineEnv": ("step", "reset"),
    "brax.envs.env.Env": ("step", "reset"),
    "brax.envs.Env": ("step", "reset"),
    "brax.envs.PipelineEnv": ("step", "reset"),
    "jumanji.env.Environment": ("step", "reset"),
    "jumanji.Environment": ("step", "reset"),
}
