import dataclasses

import jax


@dataclasses.dataclass(frozen=True)
class Config:
    num_layers: int = 4
    active_layers: int = 3
    scale: float = 0.5


jax.tree_util.register_static(Config)
