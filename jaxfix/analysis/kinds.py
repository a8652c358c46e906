"""The kinds of the project index's facts, as traced.Kind's values: plain ints, so that the index (which does not
import traced.py: traced.py reads its facts) and the screens share one definition."""

STATIC, UNKNOWN, TRACED = 0, 1, 2
