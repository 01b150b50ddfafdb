"""kiln.functional (also kiln.F): every op of the runtime by name.

    kiln.F.relu(x)
    kiln.F.cross_entropy(logits, target, label_smoothing=0.1)
    values, rest = kiln.F.split(x, sizes=[2, 3], dim=1)

Each name is a kiln.Op (see kiln.op for the arguments); a name kiln does
not know raises kiln.NotFound, with the closest names, when called. The
names are those kiln.ops() lists, plugins' ops included: dir(kiln.F) shows
the default runtime's.
"""
from . import op_listing as _op_listing
from .ops import Op


def __getattr__(name):
    if name.startswith("__"):  # Python's own probes (__path__, __wrapped__, ...)
        raise AttributeError(name)
    return Op(name)


def __dir__():
    return [op.name for op in _op_listing.ops()]
