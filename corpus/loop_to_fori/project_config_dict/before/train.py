import haiku as hk

import configs
from model import Tower


def make_net():
    config = configs.get_config()
    return hk.transform(lambda x: Tower()(x, config))
