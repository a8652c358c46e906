def hinge(margin: float) -> float:
    """Hinge loss of one classification margin."""
    if margin > 1.0:
        return 0.0
    return 1.0 - margin
