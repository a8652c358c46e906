import ml_collections


def get_config():
    config = ml_collections.ConfigDict()
    config.num_steps = 12
    config.damping = 0.5
    return config
