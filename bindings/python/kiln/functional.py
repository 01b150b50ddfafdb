"""kiln.functional (also kiln.F): every op of the runtime by name.

    kiln.F.relu(x)
    kiln.F.cross_entropy(logits, target, label_smoothing=0.1)
    values, rest = kiln.F.split(x, sizes=[2, 3], dim=1)

Each name is a kiln.Op (see kiln.ops for the arguments); a name kiln does
not know raises kiln.NotFound, with the closest names, when called.
"""
from .ops import Op


def __getattr__(name):
    if name.startswith("__"):  # Python's own probes (__path__, __wrapped__, ...)
        raise AttributeError(name)
    return Op(name)
