"""kiln.dist: the processes of a distributed job and their collectives
(kiln_dist.h), from Python.

    import kiln
    from kiln import dist

    dist.in_job()                   # started by kiln launch, torchrun, srun (RANK and WORLD_SIZE set)?
    dist.rank(), dist.world_size()  # of the job; 0 and 1 outside one
    g = kiln.ProcessGroup(timeout=60, name="eval")   # ranks and address from the environment,
    g = kiln.ProcessGroup(rank=0, world_size=2, master_addr="127.0.0.1", master_port=29500)  # or given
    dist.default_group()            # the runtime's default group (the one "ddp" uses)
    g.rank(), g.world_size(), g.backend()
    g.all_reduce(t, "mean")         # in place; "sum" (the default), "mean", "max", "min"
    g.broadcast(t, root=1)          # t becomes rank 1's
    g.all_gather(input, output)     # output: world_size x input's elements, rank r's at [r*n, (r+1)*n)
    g.reduce_scatter(input, output, "sum")
    g.send(t, dst=1, tag=0); g.recv(t, src=0, tag=0); g.barrier()
    work = g.all_reduce(t, async_op=True)   # every operation: returns a Work at once
    work.wait(); work.done()
    dist.all_reduce(t), dist.broadcast(t, 0), ..., dist.barrier()   # on the default group

Rules (those of kiln_dist.h): every rank calls the same collectives in the
same order, with tensors of the same shape and dtype. Collectives write
into the tensors given, which must be contiguous kiln Tensors (a tensor
made by kiln.from_numpy shares the array's memory, so the array sees the
result). A tensor handed to an operation with async_op=True must not be
read or written before its Work is waited for; the Work keeps the tensors
and the group alive until it is closed (or collected), and closing a Work
still running waits for it. Every operation waits at most the group's
timeout: a peer that dies or hangs raises kiln.PeerFailure or kiln.Timeout
with a message naming the operation and the rank, never a hang; after that
the group is broken, and every later call raises the same error.
"""
import ctypes
import datetime
import enum
import numbers

from . import _capi, errors
from ._handle import Handle
from ._library import decode, lib
from .creation import as_tensor
from .runtime import resolve
from .tensor import Tensor

__all__ = ["ProcessGroup", "Work", "ReduceOp", "default_group", "in_job", "rank", "world_size", "all_reduce",
           "broadcast", "all_gather", "reduce_scatter", "send", "recv", "barrier"]

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


class ReduceOp(enum.IntEnum):
    """How a collective combines the ranks' values (kiln_reduce_op); the
    functions also take the names "sum", "mean", "max" and "min"."""

    SUM = _capi.REDUCE_SUM
    MEAN = _capi.REDUCE_MEAN  # the sum divided by the number of ranks; floating dtypes only
    MAX = _capi.REDUCE_MAX
    MIN = _capi.REDUCE_MIN


def _reduce_op(op):
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, str) and op.upper() in ReduceOp.__members__ and op == op.lower():
        return ReduceOp[op.upper()]
    raise errors.InvalidArgument(f"unknown reduce op {op!r}; expected 'sum', 'mean', 'max', 'min' or a "
                                 f"kiln.dist.ReduceOp")


def _integer(role, value):
    """`value` as a C int, or InvalidArgument naming `role`."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or not _INT_MIN <= value <= _INT_MAX:
        raise errors.InvalidArgument(f"{role} must be an integer, got {value!r}")
    return int(value)


def _written(role, value):
    """A Tensor a collective writes into: a new reference the operation owns."""
    if not isinstance(value, Tensor):
        raise errors.InvalidArgument(f"{role} must be a kiln.Tensor (the collective writes into it), got "
                                     f"{type(value).__name__}; kiln.from_numpy(array) shares an array's memory")
    return value._new_reference()


def _text(value):
    return None if value is None else str(value).encode()


def _seconds(timeout):
    """A timeout in seconds (a number or a datetime.timedelta) for kiln, where 0 means "not given"."""
    if timeout is None:
        return 0.0
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    if not isinstance(timeout, numbers.Real) or isinstance(timeout, bool):
        raise errors.InvalidArgument(f"timeout is in seconds (a number or a datetime.timedelta), got {timeout!r}")
    if timeout == 0:
        # kiln reads 0 as "not given"; any other bad value gets kiln's own message.
        raise errors.InvalidArgument("timeout_seconds must be positive, got 0")
    return float(timeout)


def _options(backend, rank, world_size, master_addr, master_port, timeout, name):
    """kiln_process_group_options, with the encoded strings it points at."""
    if (rank is None) != (world_size is None):
        raise errors.InvalidArgument(
            f"rank ({rank!r}) and world_size ({world_size!r}) are given together, or neither to take RANK and "
            f"WORLD_SIZE from the environment")
    strings = [_text(backend), _text(master_addr), _text(name)]
    options = _capi.sized(_capi.ProcessGroupOptions, backend=strings[0], master_addr=strings[1], name=strings[2],
                          timeout_seconds=_seconds(timeout))
    if world_size is not None:
        options.world_size = _integer("world_size", world_size)
        options.rank = _integer("rank", rank)
        if options.world_size < 1:
            # kiln reads a world_size below 1 as "from the environment".
            raise errors.InvalidArgument(f"world_size must be at least 1, got {options.world_size}")
    if master_port is not None:
        options.master_port = _integer("master_port", master_port)
        if options.master_port == 0:  # kiln reads 0 as "not given"
            raise errors.InvalidArgument("master_port must be 1 to 65535, got 0")
    return options, strings


class Work(Handle):
    """An operation of a process group in flight (kiln_work), returned by
    the collectives with async_op=True. It holds the operation's tensors
    and its group until it is closed; closing it (or its collection) waits
    for an operation still running."""

    _release_function = "kiln_work_release"

    def __init__(self, address, group, tensors):
        super().__init__(address, group._runtime)
        self._release_group = lib.kiln_process_group_release
        lib.kiln_process_group_retain(group._ptr)
        self._group = group._ptr
        self._tensors = tensors

    def _drop(self):
        if self._address is None:
            return
        super()._drop()  # waits for the operation when it still runs
        self._release_group(self._group)
        tensors, self._tensors = self._tensors, ()
        for t in tensors:
            t.close()

    def wait(self):
        """Blocks until the operation is done; raises its error (kiln.PeerFailure,
        kiln.Timeout, ...). Waiting again raises (or returns) the same."""
        lib.kiln_work_wait(self._ptr)

    def done(self):
        """Whether the operation has finished. A send or a recv finishes in
        wait(): before, done() is False."""
        flag = ctypes.c_int()
        lib.kiln_work_done(self._ptr, ctypes.byref(flag))
        return bool(flag.value)

    def __repr__(self):
        if self.closed:
            return "<kiln.Work closed>"
        return f"<kiln.Work {'done' if self.done() else 'running'}>"


class ProcessGroup(Handle):
    """The ranks of a distributed job (kiln_process_group_create). Creating
    one meets the other ranks (rank 0 serves the rendezvous store) and
    waits at most the timeout for them. Options left None take the
    environment's value (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
    KILN_DIST_TIMEOUT), then kiln's default:

    backend: "gloo" (CPU tensors; the default) or "nccl" (GPU tensors).
    rank, world_size: given together, or neither (then from the environment).
    master_addr, master_port: the store's address (127.0.0.1:29500).
    timeout: seconds (or a datetime.timedelta) any operation may wait (600).
    name: groups of different names are separate ("default").
    """

    _release_function = "kiln_process_group_release"

    def __init__(self, backend=None, rank=None, world_size=None, master_addr=None, master_port=None, timeout=None,
                 name=None, runtime=None):
        options, _strings = _options(backend, rank, world_size, master_addr, master_port, timeout, name)
        runtime = resolve(runtime)
        out = ctypes.c_void_p()
        lib.kiln_process_group_create(runtime._raw_address, ctypes.byref(options), ctypes.byref(out))
        super().__init__(out.value, runtime)

    @classmethod
    def _adopt(cls, address, runtime):
        """A ProcessGroup owning the reference `address` that kiln gave back."""
        group = cls.__new__(cls)
        Handle.__init__(group, address, runtime)
        return group

    # ---- queries ---------------------------------------------------------------------------

    def _rank(self):
        rank, world_size = ctypes.c_int(), ctypes.c_int()
        lib.kiln_process_group_rank(self._ptr, ctypes.byref(rank), ctypes.byref(world_size))
        return rank.value, world_size.value

    def rank(self):
        """This process's rank in the group, 0 to world_size() - 1."""
        return self._rank()[0]

    def world_size(self):
        """The number of ranks in the group."""
        return self._rank()[1]

    def backend(self):
        """"gloo" or "nccl"."""
        return decode(lib.kiln_process_group_backend(self._ptr))

    # ---- operations ------------------------------------------------------------------------

    def _run(self, start, tensors, async_op):
        """Runs start(work_out) blocking, or asynchronously as a Work that
        owns `tensors` (new references); blocking, they are closed at once."""
        out = ctypes.c_void_p()
        try:
            start(ctypes.byref(out) if async_op else None)
        finally:
            if not (async_op and out.value):
                for t in tensors:
                    t.close()
        return Work(out.value, self, tensors) if async_op else None

    def _input(self, value, like=None):
        """A tensor a collective reads: a Tensor (a new reference), an ndarray
        (shared) or numbers (made with the dtype of `like` when given)."""
        return as_tensor(value, like.runtime if like is not None else self._runtime, like)

    def all_reduce(self, tensor, op="sum", async_op=False):
        """In place: `tensor` becomes the reduction over the ranks ("sum",
        "mean", "max", "min")."""
        op = _reduce_op(op)
        t = _written("all_reduce: tensor", tensor)
        return self._run(lambda w: lib.kiln_process_group_all_reduce(self._ptr, t._ptr, op, w), [t], async_op)

    def broadcast(self, tensor, root=0, async_op=False):
        """In place: `tensor` becomes rank `root`'s."""
        root = _integer("broadcast: root", root)
        t = _written("broadcast: tensor", tensor)
        return self._run(lambda w: lib.kiln_process_group_broadcast(self._ptr, t._ptr, root, w), [t], async_op)

    def all_gather(self, input, output, async_op=False):
        """`output` (world_size x input's elements, the same dtype) receives
        every rank's `input`, rank r's at elements [r*n, (r+1)*n)."""
        out = _written("all_gather: output", output)
        try:
            src = self._input(input, out)
        except BaseException:
            out.close()
            raise
        return self._run(lambda w: lib.kiln_process_group_all_gather(self._ptr, src._ptr, out._ptr, w), [src, out],
                         async_op)

    def reduce_scatter(self, input, output, op="sum", async_op=False):
        """`input` (world_size x output's elements) is reduced over the ranks
        and this rank keeps part rank() of the result in `output`."""
        op = _reduce_op(op)
        out = _written("reduce_scatter: output", output)
        try:
            src = self._input(input, out)
        except BaseException:
            out.close()
            raise
        return self._run(lambda w: lib.kiln_process_group_reduce_scatter(self._ptr, src._ptr, out._ptr, op, w),
                         [src, out], async_op)

    def send(self, tensor, dst, tag=0, async_op=False):
        """Sends `tensor` to rank `dst`, where the recv from this rank with the
        same `tag` (>= 0) takes it. On gloo an asynchronous send and recv
        start at once and complete in wait(), in any order."""
        dst, tag = _integer("send: dst", dst), _integer("send: tag", tag)
        t = self._input(tensor)
        return self._run(lambda w: lib.kiln_process_group_send(self._ptr, t._ptr, dst, tag, w), [t], async_op)

    def recv(self, tensor, src, tag=0, async_op=False):
        """Receives into `tensor` what rank `src` sends with `tag`."""
        src, tag = _integer("recv: src", src), _integer("recv: tag", tag)
        t = _written("recv: tensor", tensor)
        return self._run(lambda w: lib.kiln_process_group_recv(self._ptr, t._ptr, src, tag, w), [t], async_op)

    def barrier(self, async_op=False):
        """Returns (or completes its Work) once every rank has reached it."""
        return self._run(lambda w: lib.kiln_process_group_barrier(self._ptr, w), [], async_op)

    def __repr__(self):
        if self.closed:
            return "<kiln.ProcessGroup closed>"
        rank, world_size = self._rank()
        return f"<kiln.ProcessGroup rank {rank} of {world_size} ({self.backend()})>"


# ---- the job and its default group --------------------------------------------------------


def _job():
    """(in a job, rank, world size) from the environment, read and checked by kiln."""
    job, rank_, world = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    lib.kiln_dist_job(ctypes.byref(job), ctypes.byref(rank_), ctypes.byref(world))
    return bool(job.value), rank_.value, world.value


def in_job():
    """Whether this process is a rank of a job: RANK and WORLD_SIZE are set
    (by kiln launch, torchrun, srun-style launchers)."""
    return _job()[0]


def default_group(runtime=None):
    """The default group of `runtime` (default: the default runtime), made
    from the environment on first use: the one the "ddp" strategy uses.
    Outside a job it raises kiln.InvalidArgument naming what is missing."""
    return _default_group(resolve(runtime))


def _default_group(runtime):
    """The default group of `runtime`, which may be closed while a tensor of it keeps the C runtime alive."""
    out = ctypes.c_void_p()
    lib.kiln_process_group_default(runtime._raw_address, ctypes.byref(out))
    return ProcessGroup._adopt(out.value, runtime)


def rank():
    """This process's rank in the job (RANK, checked as kiln checks it); 0
    outside a job. Nothing is connected: no group is made."""
    return _job()[1]


def world_size():
    """The number of ranks in the job (WORLD_SIZE); 1 outside a job."""
    return _job()[2]


def _on(group, runtime, operation):
    """operation(group): `group` when given, else the default group of `runtime`."""
    if group is not None:
        if not isinstance(group, ProcessGroup):
            raise errors.InvalidArgument(f"group must be a kiln.ProcessGroup, got {type(group).__name__}")
        return operation(group)
    # A Work keeps the group it runs on: closing this reference leaves it to the Work.
    with _default_group(runtime if runtime is not None else resolve(None)) as default:
        return operation(default)


def _runtime_of(tensor):
    """The runtime whose default group a module-level collective uses: the tensor's."""
    return tensor.runtime if isinstance(tensor, Tensor) else None


def all_reduce(tensor, op="sum", async_op=False, group=None):
    """ProcessGroup.all_reduce on `group`, or on the default group of the tensor's runtime."""
    return _on(group, _runtime_of(tensor), lambda g: g.all_reduce(tensor, op, async_op))


def broadcast(tensor, root=0, async_op=False, group=None):
    return _on(group, _runtime_of(tensor), lambda g: g.broadcast(tensor, root, async_op))


def all_gather(input, output, async_op=False, group=None):
    return _on(group, _runtime_of(output), lambda g: g.all_gather(input, output, async_op))


def reduce_scatter(input, output, op="sum", async_op=False, group=None):
    return _on(group, _runtime_of(output), lambda g: g.reduce_scatter(input, output, op, async_op))


def send(tensor, dst, tag=0, async_op=False, group=None):
    return _on(group, _runtime_of(tensor), lambda g: g.send(tensor, dst, tag, async_op))


def recv(tensor, src, tag=0, async_op=False, group=None):
    return _on(group, _runtime_of(tensor), lambda g: g.recv(tensor, src, tag, async_op))


def barrier(async_op=False, group=None, runtime=None):
    """ProcessGroup.barrier on `group`, or on the default group of `runtime`
    (default: the default runtime)."""
    return _on(group, None if runtime is None else resolve(runtime), lambda g: g.barrier(async_op))
