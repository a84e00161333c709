"""JAX's collectives for keras_backend.distribute (its ``collectives`` module for JAX).

Two paths (:func:`paths`; ``init``'s ``collectives`` chooses):

* ``'mpi'`` (the default on a CPU machine when the job runs under MPI): the allreduce is a
  host callback (JAX's own extension point) in the ``K.function``'s program, whose body
  hands the buffer to ``MPI_Iallreduce`` (:mod:`keras_backend.distribute.mpi`, bounded by
  ``init``'s timeout): a plain host callback (a primitive of ours lowered through JAX's
  ``emit_python_callback``, :func:`_host_primitive`; ``jax.pure_callback`` on a JAX
  without it) where the program's data already
  orders its collectives and none is differentiated (the gradients' fused buffers are
  chained), else an ordered one (JAX's ordered-IO effect, as
  ``jax.experimental.io_callback(..., ordered=True)``) whose gradient
  (``jax.custom_vjp``) is the same callback on the incoming gradient. Each process runs
  its program on its own device as with one process: no coordinator, no global arrays,
  no ``shard_map``. Ordered: every worker makes its collectives in program order.
* ``'engine'``: JAX's own collectives, below.

The engine path's runtime: ``jax.distributed.initialize`` (the coordinator address: the launcher's, or
rank 0's found under mpirun / srun by ``keras_backend.distribute.rendezvous``; rank 0's
coordinator service binds that address only, :func:`coordinator_bind_address`) with
gloo CPU collectives, one CPU device per process. The op: ``lax.psum`` over the mesh
axis ``'workers'`` of every process's device. A ``K.function`` whose graph holds one runs
its whole program under ``jax.shard_map`` (``check_vma=False``: each worker's values are
its own, so a gradient through the sum is the summed gradient, not twice it): every
input, variable and output is this worker's block of a global array, one block per
worker. A hung peer is bounded by XLA's ``--xla_cpu_collective_timeout_seconds`` (set
from ``init``'s timeout), a dead one by the coordination service's heartbeat.
"""
import os

import numpy as np

from ..distribute import mpi as _mpi
from ..distribute import rendezvous as _rendezvous
from ..distribute import stall as _stall

AXIS = 'workers'


class _S(object):
    path = 'engine'
    size = 1
    mesh = None
    spec = None
    sharding = None
    device = None
    timeout = 0.0
    runs = {}


def paths():
    return _rendezvous.own_and_mpi_paths()


def start(rank, size, timeout, path):
    _S.path = path
    if path == 'mpi':
        return _mpi.start(size, timeout)
    flags = os.environ.get('XLA_FLAGS', '')
    if 'xla_cpu_collective_timeout_seconds' not in flags:
        os.environ['XLA_FLAGS'] = (flags + ' --xla_cpu_collective_timeout_seconds=%d'
                                   % max(1, int(round(timeout)))).strip()
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    address = os.environ.get('KERAS_BACKEND_DISTRIBUTE_COORDINATOR', '')
    if not address:
        raise RuntimeError('keras_backend.distribute: JAX needs the coordinator address '
                           '(KERAS_BACKEND_DISTRIBUTE_COORDINATOR); start the workers with '
                           'python -m keras_backend.distribute -n N script.py, mpirun or '
                           'srun')
    jax.config.update('jax_cpu_collectives_implementation', 'gloo')
    beat = max(10, int(round(timeout)))
    try:
        jax.distributed.initialize(coordinator_address=address, num_processes=size,
                                   process_id=rank, initialization_timeout=beat,
                                   heartbeat_timeout_seconds=beat,
                                   local_device_ids=[0],
                                   **_bind_argument(jax.distributed.initialize, address))
    except Exception as e:    # the coordination service's own errors
        from ..distribute import WorkerLost
        raise WorkerLost('the other workers did not join (%s: %s)'
                         % (type(e).__name__, str(e).strip().split('\n')[0]))
    devices = jax.devices()
    _S.size = size
    _S.mesh = Mesh(np.asarray(devices), (AXIS,))
    _S.spec = PartitionSpec(AXIS)
    _S.sharding = NamedSharding(_S.mesh, _S.spec)
    _S.device = jax.local_devices()[0]
    _S.timeout = float(timeout)
    return jax.process_index(), jax.process_count()


def coordinator_bind_address(address):
    """Where rank 0's coordinator service listens: the coordinator address's host when it
    is an address (127.0.0.1 under our launcher on one host, the chosen interface's on
    several), not JAX's default of every interface (``[::]``); None for a host name that
    does not resolve here to one of this host's addresses
    (:func:`keras_backend.distribute.rendezvous.listen_address`)."""
    from ..distribute import rendezvous
    host, _, port = address.rpartition(':')
    bind = rendezvous.listen_address(host)
    if not bind or not port.isdigit():
        return None
    return rendezvous._host_port(bind, int(port))


def _bind_argument(initialize, address):
    """``{'coordinator_bind_address': ...}`` where this JAX takes it (0.4.21 and later)."""
    import inspect
    try:
        takes = 'coordinator_bind_address' in inspect.signature(initialize).parameters
    except (TypeError, ValueError):
        takes = False
    bind = coordinator_bind_address(address) if takes else None
    return {'coordinator_bind_address': bind} if bind else {}


def stop():
    if _S.path == 'mpi':
        return
    import jax
    jax.distributed.shutdown()


def _local_block(x):
    """``x`` (an array-like) on this worker's device, with an axis 0 to split the global
    array on: 0-d values and empty axes 0 get a leading axis of 1 (True: expanded)."""
    import jax
    if not isinstance(x, jax.Array):
        x = np.asarray(x)
    if x.ndim == 0 or x.shape[0] == 0:
        return jax.device_put(np.asarray(x)[None], _S.device), True
    return jax.device_put(x, _S.device), False


def _global(block):
    """The global array whose block on this worker is ``block`` (no copy)."""
    import jax
    shape = (block.shape[0] * _S.size,) + tuple(block.shape[1:])
    return jax.make_array_from_single_device_arrays(shape, _S.sharding, [block])


def spmd_program(pure):
    """The SPMD form of a ``K.function``'s pure program ``pure(updated, read, fed, phase,
    static) -> (outs, news)``: the same signature on this worker's values, compiled once
    per phase/static values with the updated variables' buffers donated.

    Each worker's value is its block of a global array split on axis 0 (its own shape,
    no copy; a 0-d value, or one with an empty axis 0, gets a leading axis of 1), so
    every worker must feed arrays of the same shapes (equal batches)."""
    import jax
    import jax.numpy as jnp

    def program(updated, read, fed, phase, static, expanded):
        def body(u, r, f):
            args = []
            flags = iter(expanded)
            for group in (u, r, f):
                args.append([a[0] if next(flags) else a for a in group])
            outs, news = pure(args[0], args[1], args[2], phase, static)
            results = [jnp.asarray(a) for a in list(outs) + list(news)]
            # the local shape of each result that gets a leading axis (noted while tracing)
            local_shapes[trace_key[0]] = [
                tuple(a.shape) if a.ndim == 0 or a.shape[0] == 0 else None for a in results]
            results = [a[None] if a.ndim == 0 or a.shape[0] == 0 else a for a in results]
            return results[:len(outs)], results[len(outs):]
        return jax.shard_map(body, mesh=_S.mesh, in_specs=(_S.spec, _S.spec, _S.spec),
                             out_specs=_S.spec, check_vma=False)(updated, read, fed)

    jitted = jax.jit(program, static_argnums=(3, 4, 5), donate_argnums=(0,))
    local_shapes = {}
    trace_key = [None]

    def run(updated, read, fed, phase, static=()):
        groups, expanded = [], []
        for values in (updated, read, fed):
            blocks = []
            for v in values:
                b, e = _local_block(v)
                blocks.append(_global(b))
                expanded.append(e)
            groups.append(blocks)
        key = (phase, static, tuple(expanded),
               tuple((tuple(g.shape), str(g.dtype)) for grp in groups for g in grp))
        trace_key[0] = key
        _stall.entered('allreduce')
        try:
            outs, news = jitted(groups[0], groups[1], groups[2], phase, static,
                                tuple(expanded))
        except Exception as e:
            from ..distribute import _raise_if_lost
            _raise_if_lost(e)
            raise
        shapes = local_shapes[key]
        results = [_block_of(g, s) for g, s in zip(list(outs) + list(news), shapes)]
        return results[:len(outs)], results[len(outs):]
    return run


def _block_of(g, shape):
    """This worker's block of the global result ``g``; ``shape``: its local shape where
    the program gave it a leading axis, else None."""
    block = g.addressable_shards[0].data
    return block if shape is None else block.reshape(shape)


def _mpi_allreduce_function(average):
    """``v -> the allreduce of v`` over MPI, an ordered host callback whose gradient is
    the same allreduce of the incoming gradient (made once per ``average``)."""
    key = ('mpi', bool(average))
    run = _S.runs.get(key)
    if run is not None:
        return run
    import jax

    def call(v):
        return _callback_allreduce(v, average, _ordered_callback)

    @jax.custom_vjp
    def allreduce(v):
        return call(v)

    def forward(v):
        return call(v), None

    def backward(_, g):
        return (call(g),)
    allreduce.defvjp(forward, backward)
    _S.runs[key] = allreduce
    return allreduce


def _callback_allreduce(v, average, callback):
    """The MPI allreduce of ``v`` through ``callback(host, result_spec, v)`` (a host
    callback of JAX's) whose body runs ``MPI_Iallreduce``."""
    import jax

    def host(value):
        return _mpi.allreduce_numpy(np.asarray(value), average)
    return callback(host, jax.ShapeDtypeStruct(v.shape, v.dtype), v)


def _host_primitive():
    """``(primitive, ShapedArray, ordered primitive)``, made once: a JAX primitive whose
    lowering is a plain host callback that hands ``fn`` (a param) the operands as numpy
    arrays and takes its numpy results; None where this JAX lacks what it uses (then
    ``jax.pure_callback`` and ``io_callback`` serve).

    ``jax.pure_callback`` wraps its host function in per-call Python that a collective
    does not need: the operands are put back onto a JAX CPU device
    (``device_put``) under a default-device scope and mapped over with ``np.asarray``
    (a copy each way of the buffer). Lowered through JAX's ``emit_python_callback``
    directly, the host function gets XLA's buffers as numpy arrays: an identity call in
    ``jit`` 0.08 -> 0.012 ms for 2,730 values, 2.16 -> 1.41 ms for 2.2M, here. Like a
    plain callback, it has no effect (a program's data must order it) and no
    derivative; the primitive's params are the host function and the result avals.
    The ordered primitive is the same call with JAX's ordered-IO effect (the runtime
    token of ``io_callback(..., ordered=True)``)."""
    found = _S.runs.get('host_primitive', False)
    if found is not False:
        return found
    try:
        import functools
        from jax._src import dispatch
        from jax._src.callback import _OrderedIOEffect, emit_python_callback
        from jax._src.core import ShapedArray
        from jax.extend.core import Primitive
        from jax.interpreters import mlir

        prim = Primitive('keras_backend_host_call')
        prim.multiple_results = True
        prim.def_abstract_eval(lambda *avals, fn, out_avals: list(out_avals))
        prim.def_impl(functools.partial(dispatch.apply_primitive, prim))

        def lower(ctx, *args, fn, out_avals):
            result, _, _ = emit_python_callback(
                ctx, fn, None, list(args), ctx.avals_in, ctx.avals_out,
                has_side_effect=False, returns_token=False)
            return result
        mlir.register_lowering(prim, lower, cacheable=False)

        # the ordered one: JAX's own ordered-IO effect, so that the program threads
        # its runtime token through every call in program order, as io_callback's
        ordered = Primitive('keras_backend_ordered_host_call')
        ordered.multiple_results = True
        ordered.def_effectful_abstract_eval(
            lambda *avals, fn, out_avals: (list(out_avals), {_OrderedIOEffect}))
        ordered.def_impl(functools.partial(dispatch.apply_primitive, ordered))

        def lower_ordered(ctx, *args, fn, out_avals):
            token = ctx.tokens_in.get(_OrderedIOEffect)
            result, token, _ = emit_python_callback(
                ctx, fn, token, list(args), ctx.avals_in, ctx.avals_out,
                has_side_effect=True, returns_token=True)
            ctx.set_tokens_out(ctx.tokens_in.update_tokens(
                mlir.TokenSet({_OrderedIOEffect: token})))
            return result
        mlir.register_lowering(ordered, lower_ordered, cacheable=False)
        found = (prim, ShapedArray, ordered)
    except Exception:  # noqa: BLE001 - another JAX: jax.pure_callback serves
        found = None
    _S.runs['host_primitive'] = found
    return found


def _plain_callback(host, spec, v):
    """``host(v)`` as a plain host callback: our primitive (:func:`_host_primitive`),
    else ``jax.pure_callback``."""
    import jax
    found = _host_primitive()
    if found is None:
        return jax.pure_callback(host, spec, v)
    prim, ShapedArray, _ = found
    aval = ShapedArray(tuple(spec.shape), np.dtype(spec.dtype))
    return prim.bind(v, fn=_HostFn(host), out_avals=(aval,))[0]


def _ordered_callback(host, spec, v):
    """``host(v)`` as an ordered host callback (JAX's ordered-IO effect): our ordered
    primitive, else ``jax.experimental.io_callback(..., ordered=True)`` (which, like
    ``jax.pure_callback``, puts the operand back onto a CPU device first: a copy that
    XLA's CPU pool makes, see ``core._callback_pool_threads``)."""
    found = _host_primitive()
    if found is None:
        from jax.experimental import io_callback
        return io_callback(host, spec, v, ordered=True)
    _, ShapedArray, ordered = found
    aval = ShapedArray(tuple(spec.shape), np.dtype(spec.dtype))
    return ordered.bind(v, fn=_HostFn(host), out_avals=(aval,))[0]


class _HostFn(object):
    """``host`` as a primitive param (hashed and compared by the function itself), its
    result returned as a one-tuple."""

    def __init__(self, host):
        self.host = host

    def __call__(self, *arrays):
        return (self.host(*arrays),)

    def __hash__(self):
        return hash(self.host)

    def __eq__(self, other):
        return isinstance(other, _HostFn) and other.host is self.host


def _mpi_allreduce_op(average):
    """The op of one MPI allreduce node: a plain host callback (:func:`_plain_callback`)
    where the program's data orders it among its collectives (the K.function says so,
    :class:`.core._HostCollectives`), else the ordered, differentiable callback of
    :func:`_mpi_allreduce_function`. The plain one keeps the program on JAX's C++
    dispatch path: an ordered effect sends every call through Python's (0.23 against
    0.06 ms a call for 2,730 values here)."""
    from . import core
    ordered = _mpi_allreduce_function(average)

    def op(v):
        state = core._HostCollectives
        if op in state.unordered:
            state.unordered_calls += 1
            return _callback_allreduce(v, average, _plain_callback)
        state.ordered_calls += 1
        return ordered(v)
    op.host_collective = True
    return op


def allreduce_tensor(K, x, average, state):
    """A node of the adapter ``K``'s graph (this package's, :mod:`.core`): ``lax.psum`` over
    the workers (divided by their number for ``average``; integers rounded toward zero),
    or, on the MPI path, the MPI callback (:func:`_mpi_allreduce_op`)."""
    from .core import _flatten, _node
    if _S.path == 'mpi':
        leaves, treedef = _flatten((x,))
        return _node(_mpi_allreduce_op(average), leaves, treedef, avals=x.avals)
    from jax import lax
    import jax.numpy as jnp
    n = state.size

    def allreduce(v):
        total = lax.psum(v, AXIS)
        if not average:
            return total
        if jnp.issubdtype(total.dtype, jnp.floating):
            return total / jnp.asarray(n, total.dtype)
        return lax.div(total, jnp.asarray(n, total.dtype))
    allreduce.program_wrapper = spmd_program
    leaves, treedef = _flatten((x,))
    return _node(allreduce, leaves, treedef, avals=x.avals)


def _array_allreduce():
    """The compiled ``lax.psum`` of one flat array over the workers (made once)."""
    run = _S.runs.get('sum')
    if run is None:
        import jax
        from jax import lax
        run = jax.jit(jax.shard_map(lambda v: lax.psum(v, AXIS), mesh=_S.mesh,
                                    in_specs=_S.spec, out_specs=_S.spec, check_vma=False))
        _S.runs['sum'] = run
    return run


def allreduce_array(flat, average, state):
    return _allreduce_array(flat, average, state, 'allreduce')


def _allreduce_array(flat, average, state, kind):
    """``allreduce_array``, told to the stall check as a collective of ``kind``."""
    if _S.path == 'mpi':
        if kind == 'barrier':
            _mpi.barrier()
            return flat
        return _mpi.allreduce_numpy(flat, average, kind)
    _stall.entered(kind)
    try:
        block, _ = _local_block(flat.reshape((1, -1)))
        out = np.asarray(_array_allreduce()(_global(block)).addressable_shards[0]
                         .data).reshape(flat.shape)
    except Exception as e:
        from ..distribute import _raise_if_lost
        _raise_if_lost(e)
        raise
    if average:
        out = out / state.size if out.dtype.kind == 'f' else out // state.size
    return out.astype(flat.dtype)


def barrier(state):
    _allreduce_array(np.zeros(1, np.float32), False, state, 'barrier')


def lost_reason(error):
    """XLA's errors of a collective that timed out or lost its peer (gloo: "Gloo
    all-reduce failed ... Timed out", "Connection reset by peer"), and the coordination
    service's reports of a dead task. JAX raises them as ``ValueError`` or
    ``JaxRuntimeError`` with the status in the text."""
    if _S.path == 'mpi':
        return _mpi.lost_reason(error)
    text = str(error).strip()
    low = text.lower()
    if 'gloo' in low or 'coordination service' in low or (
            'collective' in low and ('timed out' in low or 'deadline' in low
                                     or 'unavailable' in low)):
        return '%s: %s' % (type(error).__name__, text.split('\n')[0][:300])
    return None
