import ml_collections


def get_config():
    config = ml_collections.ConfigDict()
    config.width = 16
    config.num_layers = 12
    return config
