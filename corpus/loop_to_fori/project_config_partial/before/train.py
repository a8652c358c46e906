import functools

import haiku as hk

import configs
import model


def make_net():
    config = configs.get_config()
    return hk.transform(functools.partial(model.forward, model_config=config))
