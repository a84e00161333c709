"""JAX's collectives for keras_backend.distribute.

The runtime: ``jax.distributed.initialize`` (the launcher's coordinator address) with
gloo CPU collectives, one CPU device per process. The op: ``lax.psum`` over the mesh
axis ``'workers'`` of every process's device. A ``K.function`` whose graph holds one runs
its whole program under ``jax.shard_map`` (``check_vma=False``: each worker's values are
its own, so a gradient through the sum is the summed gradient, not twice it): every
input, variable and output is this worker's block of a global array, one block per
worker. A hung peer is bounded by XLA's ``--xla_cpu_collective_timeout_seconds`` (set
from ``init``'s timeout), a dead one by the coordination service's heartbeat.
"""
import functools
import os

import numpy as np

AXIS = 'workers'


class _S(object):
    size = 1
    mesh = None
    spec = None
    sharding = None
    device = None
    timeout = 0.0
    runs = {}


def start(rank, size, timeout):
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
                           'python -m keras_backend.distribute -n N script.py')
    jax.config.update('jax_cpu_collectives_implementation', 'gloo')
    beat = max(10, int(round(timeout)))
    try:
        jax.distributed.initialize(coordinator_address=address, num_processes=size,
                                   process_id=rank, initialization_timeout=beat,
                                   heartbeat_timeout_seconds=beat,
                                   local_device_ids=[0])
    except Exception as e:    # the coordination service's own errors
        from . import WorkerLost
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


def stop():
    import jax
    jax.distributed.shutdown()


def _to_global(x):
    """This worker's value as its block of a global (workers, *shape) array."""
    import jax
    import jax.numpy as jnp
    local = jax.device_put(jnp.asarray(x)[None], _S.device)
    return jax.make_array_from_single_device_arrays((_S.size,) + local.shape[1:],
                                                    _S.sharding, [local])


def _to_local(x):
    return x.addressable_shards[0].data[0]


def spmd_program(pure):
    """The SPMD form of a ``K.function``'s pure program ``pure(updated, read, fed, phase,
    static) -> (outs, news)``: the same signature on this worker's values, compiled once
    per phase/static values with the updated variables' buffers donated."""
    import jax
    import jax.numpy as jnp

    def program(updated, read, fed, phase, static):
        def body(u, r, f):
            block = functools.partial(jax.tree_util.tree_map, lambda a: a[0])
            outs, news = pure(block(u), block(r), block(f), phase, static)
            grow = functools.partial(jax.tree_util.tree_map, lambda a: jnp.asarray(a)[None])
            return grow(list(outs)), grow(list(news))
        return jax.shard_map(body, mesh=_S.mesh, in_specs=(_S.spec, _S.spec, _S.spec),
                             out_specs=_S.spec, check_vma=False)(updated, read, fed)

    jitted = jax.jit(program, static_argnums=(3, 4), donate_argnums=(0,))

    def run(updated, read, fed, phase, static=()):
        glob = functools.partial(jax.tree_util.tree_map, _to_global)
        try:
            outs, news = jitted(glob(list(updated)), glob(list(read)), glob(list(fed)),
                                phase, static)
            loc = functools.partial(jax.tree_util.tree_map, _to_local)
            return loc(outs), loc(news)
        except Exception as e:
            from . import _worker_lost
            lost = _worker_lost(e)
            if lost is not None:
                raise lost from e
            raise
    return run


def allreduce_tensor(K, x, average, state):
    """A node of the adapter ``K``'s graph: ``lax.psum`` over the workers (divided by
    their number for ``average``; integers rounded toward zero)."""
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
    leaves, treedef = K._flatten((x,))
    return K._node(allreduce, leaves, treedef, avals=x.avals)


def _array_allreduce(average):
    key = bool(average)
    run = _S.runs.get(key)
    if run is None:
        import jax
        from jax import lax

        def body(v):
            total = lax.psum(v, AXIS)
            return total
        run = jax.jit(jax.shard_map(body, mesh=_S.mesh, in_specs=_S.spec, out_specs=_S.spec,
                                    check_vma=False))
        _S.runs[key] = run
    return run


def allreduce_array(flat, average, state):
    try:
        out = np.asarray(_to_local(_array_allreduce(average)(_to_global(flat))))
    except Exception as e:
        from . import _worker_lost
        lost = _worker_lost(e)
        if lost is not None:
            raise lost from e
        raise
    if average:
        out = out / state.size if out.dtype.kind == 'f' else out // state.size
    return out.astype(flat.dtype)


def barrier(state):
    allreduce_array(np.zeros(1, np.float32), False, state)


def lost_reason(error):
    """XLA's errors of a collective that timed out or lost its peer (gloo: "Gloo
    all-reduce failed ... Timed out", "Connection reset by peer"), and the coordination
    service's reports of a dead task. JAX raises them as ``ValueError`` or
    ``JaxRuntimeError`` with the status in the text."""
    text = str(error).strip()
    low = text.lower()
    if 'gloo' in low or 'coordination service' in low or (
            'collective' in low and ('timed out' in low or 'deadline' in low
                                     or 'unavailable' in low)):
        return '%s: %s' % (type(error).__name__, text.split('\n')[0][:300])
    return None
