"""PyTorch's collectives for keras_backend.distribute (its ``collectives`` module for PyTorch).

Two paths (:func:`paths`; ``init``'s ``collectives`` chooses):

* ``'engine'``: ``torch.distributed`` with the Gloo backend (CPU tensors). The group starts
  with ``init_process_group`` on a ``TCPStore`` at the coordinator address (the
  launcher's, or rank 0's found under mpirun / srun by
  ``keras_backend.distribute.rendezvous``; rank 0 serves it on that address's host only,
  the others connect), the timeout ``init``'s. The op: ``dist.all_reduce`` (a sum) of the value, in an autograd
  ``Function`` whose backward is the same allreduce of the incoming gradient. A float16
  value travels as float32 (:func:`float16_on_wire`).
* ``'mpi'``: the value's host copy summed by ``MPI_Iallreduce``
  (:mod:`keras_backend.distribute.mpi`, bounded by ``init``'s timeout), in the same autograd
  ``Function``.

A ``K.function`` evaluates its nodes in order on every worker, so every worker makes its
collectives in the order of the graph (the same on each).
"""
import datetime
import os

import numpy as np

from ..distribute import mpi as _mpi
from ..distribute import rendezvous as _rendezvous
from ..distribute import stall as _stall


class _S(object):
    path = 'engine'
    size = 1
    started = False
    store = None
    exit_hook = False


def paths():
    return _rendezvous.own_and_mpi_paths()


def start(rank, size, timeout, path):
    _S.path = path
    _S.size = size
    if path == 'mpi':
        return _mpi.start(size, timeout)
    import torch.distributed as dist
    address = os.environ.get('KERAS_BACKEND_DISTRIBUTE_COORDINATOR', '')
    if not address:
        raise RuntimeError('keras_backend.distribute: PyTorch needs the coordinator address '
                           '(KERAS_BACKEND_DISTRIBUTE_COORDINATOR); start the workers with '
                           'python -m keras_backend.distribute -n N script.py, mpirun or '
                           'srun')
    wait = datetime.timedelta(seconds=max(1., float(timeout)))
    try:
        store = _store(address, rank, size, wait)
        dist.init_process_group('gloo', store=store, rank=rank, world_size=size,
                                timeout=wait)
    except Exception as e:    # the rendezvous' own errors
        from ..distribute import WorkerLost
        raise WorkerLost('the other workers did not join (%s: %s)'
                         % (type(e).__name__, str(e).strip().split('\n')[0]))
    _S.started = True
    _S.store = store
    if not _S.exit_hook:
        # the group and its store stopped before the interpreter's own teardown: their C++
        # threads destroyed at exit would abort the process (SIGABRT)
        import atexit
        atexit.register(stop)
        _S.exit_hook = True
    return dist.get_rank(), dist.get_world_size()


def _store(address, rank, size, wait):
    """The ``torch.distributed.TCPStore`` of the group at the coordinator ``address``:
    rank 0 serves it on a socket of ours bound to the address's host only (127.0.0.1 under
    our launcher on one host, the chosen interface's on several; PyTorch's own would listen
    on every interface), the others connect to it."""
    import socket
    import torch.distributed as dist
    host, _, port = address.rpartition(':')
    host = host.strip('[]')
    port = int(port)
    if rank != 0:
        return dist.TCPStore(host, port, size, False, wait)
    bind = _rendezvous.listen_address(host)
    if not bind:
        return dist.TCPStore(host, port, size, True, wait)
    family = socket.AF_INET6 if ':' in bind else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((bind, port))
    sock.listen(128)
    store = dist.TCPStore(host, port, size, True, wait, master_listen_fd=sock.fileno(),
                          use_libuv=False)
    sock.detach()              # the store's server owns the descriptor now
    return store


def stop():
    if _S.path == 'mpi' or not _S.started:
        return
    import time
    import torch.distributed as dist
    try:
        dist.destroy_process_group()
    finally:
        _S.started = False
        _S.store = None
        # Gloo's worker threads free each finished collective's tensors just after it
        # returns, and a tensor's last free takes the GIL: at the interpreter's teardown that
        # aborts the process ("terminate called without an active exception", SIGABRT: seen
        # on about one exit in four after a last allreduce on a loaded machine). The GIL
        # released a moment here lets them finish while the interpreter is whole.
        time.sleep(0.25)


def float16_on_wire():
    """False: Gloo's sum of float16 is not offered everywhere; float16 values travel as
    float32."""
    return False


def _sum(t, kind='allreduce'):
    """The sum over the workers of the CPU tensor ``t`` (a new tensor)."""
    if _S.path == 'mpi':
        flat = t.detach().cpu().numpy().reshape(-1)
        import torch
        out = _mpi.allreduce_numpy(flat, False, kind)
        return torch.from_numpy(np.array(out, dtype=flat.dtype)).reshape(t.shape)
    import torch
    import torch.distributed as dist
    _stall.entered(kind)
    wire = t.detach().to(torch.float32) if t.dtype in (torch.float16, torch.bfloat16) \
        else t.detach().clone()
    try:
        dist.all_reduce(wire, op=dist.ReduceOp.SUM)
    except Exception as e:
        from ..distribute import _raise_if_lost
        _raise_if_lost(e)
        raise
    return wire.to(t.dtype)


def _mean(total, n):
    import torch
    if total.is_floating_point():
        return total / n
    return torch.div(total, n, rounding_mode='trunc')


def _allreduce_function():
    import torch

    class _AllReduce(torch.autograd.Function):
        @staticmethod
        def forward(ctx, v, average):
            ctx.average = average
            total = _sum(v)
            return _mean(total, _S.size) if average else total

        @staticmethod
        def backward(ctx, g):
            total = _sum(g.contiguous())
            return (_mean(total, _S.size) if ctx.average else total), None
    return _AllReduce


def allreduce_tensor(K, x, average, state):
    """A node of the adapter ``K``'s graph (this package's, :mod:`.core`): the sum over the
    workers (divided by their number for ``average``; integers rounded toward zero), whose
    gradient is the same allreduce of the incoming gradient."""
    from .core import _flatten, _node, _PROBING
    fn = _allreduce_function()

    def allreduce(v):
        if _PROBING[0]:
            return v
        if v.is_floating_point() and (v.requires_grad or not v.is_leaf):
            return fn.apply(v, average)
        total = _sum(v)
        return _mean(total, state.size) if average else total
    allreduce.stateful = True
    leaves, treedef = _flatten((x,))
    return _node(allreduce, leaves, treedef, avals=x.avals)


def allreduce_array(flat, average, state):
    return _allreduce_array(flat, average, state, 'allreduce')


def _allreduce_array(flat, average, state, kind):
    """``allreduce_array``, told to the stall check as a collective of ``kind``."""
    if _S.path == 'mpi':
        if kind == 'barrier':
            _mpi.barrier()
            return flat
        return _mpi.allreduce_numpy(flat, average, kind)
    import torch
    out = _sum(torch.from_numpy(np.ascontiguousarray(flat).copy()), kind).numpy()
    if average:
        out = out / state.size if out.dtype.kind == 'f' else out // state.size
    return out.astype(flat.dtype)


def barrier(state):
    _allreduce_array(np.zeros(1, np.float32), False, state, 'barrier')


def lost_reason(error):
    """Gloo's errors of a collective that timed out or lost its peer ("Connection reset by
    peer", "Connection closed by peer", "Timed out"), which ``torch.distributed`` raises as
    ``RuntimeError`` (or its ``DistBackendError``) with the text."""
    if _S.path == 'mpi':
        return _mpi.lost_reason(error)
    text = str(error).strip()
    low = text.lower()
    if 'gloo' in low or 'connection reset' in low or 'connection closed' in low or \
            'timed out' in low or 'broken pipe' in low:
        return '%s: %s' % (type(error).__name__, text.split('\n')[0][:300])
    return None
