import haiku as hk
import jax


def forward(tokens, model_config):
    x = hk.Embed(model_config.vocab_size, model_config.width)(tokens)
    for _ in range(model_config.num_layers):
        x = x + jax.nn.gelu(hk.Linear(model_config.width)(x))
    return x
