"""Horovod's API over the process group (:mod:`keras_backend.distribute.group`): the
in-graph collectives (``allreduce``, ``allgather``, ``broadcast``) and their eager forms on
numpy values, ``Compression``, ``join`` for workers with uneven data, and ``shard``.

The public names are gathered in :mod:`keras_backend.distribute`.
"""
import os

import numpy as np

from .group import _State, _adapter, _need_init

#: Horovod's tensor fusion: tensors of one dtype travel in buffers of at most this many
#: bytes (a tensor larger than it alone in one); 0: one collective per tensor
ENV_FUSION_THRESHOLD = 'KERAS_BACKEND_DISTRIBUTE_FUSION_THRESHOLD'
DEFAULT_FUSION_THRESHOLD = 64 * 1024 * 1024     # Horovod's HOROVOD_FUSION_THRESHOLD


def fusion_threshold():
    """The fusion buffer size in bytes: ``$KERAS_BACKEND_DISTRIBUTE_FUSION_THRESHOLD``
    (an integer >= 0; 0: no fusion), else 64 MiB as Horovod. ValueError names the
    variable when it is not such an integer."""
    text = os.environ.get(ENV_FUSION_THRESHOLD, '').strip()
    if not text:
        return DEFAULT_FUSION_THRESHOLD
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError('%s must be a number of bytes >= 0, got %r'
                         % (ENV_FUSION_THRESHOLD, text))
    return value


def _buckets(members, itemsize, threshold):
    """``members`` ((index, shape) in the order given) in fusion buffers of at most
    ``threshold`` bytes, made from the last member backwards (a model's last layers get
    their gradients first); each buffer keeps the members' order."""
    out, current, size = [], [], 0
    for i, shape in reversed(members):
        n = int(np.prod(shape, dtype=np.int64)) * itemsize
        if current and (threshold == 0 or size + n > threshold):
            out.append(current[::-1])
            current, size = [], 0
        current.append((i, shape))
        size += n
    if current:
        out.append(current[::-1])
    return out

def _dtype_name(K, t):
    return str(K.dtype(t))


class ReduceOp(object):
    """A reduction of :func:`allreduce` / :func:`allreduce_values`: :data:`Average` or
    :data:`Sum` (Horovod's ``hvd.Average``, ``hvd.Sum``)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return 'keras_backend.distribute.%s' % self.name


#: the mean over the (active) workers
Average = ReduceOp('Average')
#: the sum over the (active) workers
Sum = ReduceOp('Sum')


def _reduce_op(fname, average, op):
    """True for a mean, False for a sum, from Horovod's two spellings (``op`` wins; both
    given and different: ValueError)."""
    if op is not None and not isinstance(op, ReduceOp):
        raise TypeError('%s: op must be keras_backend.distribute.Average or .Sum, got %r'
                        % (fname, op))
    if average is not None and not isinstance(average, (bool, np.bool_)):
        raise TypeError('%s: average must be True, False or None, got %r' % (fname, average))
    if op is None:
        return True if average is None else bool(average)
    if average is not None and bool(average) != (op is Average):
        raise ValueError('%s: average=%r contradicts op=%r; give one of them'
                         % (fname, average, op))
    return op is Average


class NoneCompressor(object):
    """No compression: ``compress`` returns the tensor itself."""

    @staticmethod
    def compress(tensor):
        """``(tensor, None)``."""
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        """``tensor``."""
        return tensor


class FP16Compressor(object):
    """Float tensors travel as float16: ``compress`` casts a float32/float64 tensor of the
    active adapter to float16 (other dtypes are left alone), ``decompress`` casts back.
    On an engine whose collective cannot move float16 (its collectives module's
    ``float16_on_wire()`` is False: Theano/PyTensor's MPI, CNTK) it leaves tensors alone:
    there it would cost the rounding and save no bytes."""

    @staticmethod
    def compress(tensor):
        """``(float16 tensor, original dtype)``, or ``(tensor, None)`` for a tensor that is
        not float32/float64 or on an engine that does not move float16."""
        K = _adapter()
        dtype = _dtype_name(K, tensor)
        wire = getattr(_State.impl, 'float16_on_wire', None)
        if wire is not None and not wire():
            return tensor, None
        if dtype in ('float32', 'float64'):
            return K.cast(tensor, 'float16'), dtype
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        """``tensor`` cast back to ``ctx`` (the dtype ``compress`` returned), if any."""
        if ctx is None:
            return tensor
        return _adapter().cast(tensor, ctx)


class Compression(object):
    """Horovod's compression choices for :func:`allreduce` and ``DistributedOptimizer``:
    ``Compression.none`` (default) and ``Compression.fp16`` (float tensors are reduced as
    float16: half the bytes, about 3 significant digits; see ``docs/semantics.md`` for the
    engines that sum them in float32)."""
    none = NoneCompressor
    fp16 = FP16Compressor


def _check_compression(fname, compression):
    if compression is None:
        return Compression.none
    if not (callable(getattr(compression, 'compress', None))
            and callable(getattr(compression, 'decompress', None))):
        raise TypeError('%s: compression must be Compression.none, Compression.fp16 or an '
                        'object with compress(tensor) and decompress(tensor, ctx), got %r'
                        % (fname, compression))
    return compression


def _active_flag(K):
    """The adapter variable holding 1.0 while this worker trains and 0.0 while it is
    joined (:func:`join`); every in-graph allreduce reads it (made on first use)."""
    if _State.active is None:
        _State.active = K.variable(np.float32(1.0), dtype='float32', name='distribute_active')
    return _State.active


def allreduce(tensors, average=None, op=None, compression=None):
    """The sum (or mean) over every worker of each symbolic tensor, in the engine's graph.

    Tensors of one dtype go through one fused collective: flattened, concatenated with
    this worker's ``active`` flag (1; 0 while it is joined, :func:`join`), reduced, split
    back; in buffers of at most ``$KERAS_BACKEND_DISTRIBUTE_FUSION_THRESHOLD`` bytes
    (Horovod's tensor fusion; default 64 MiB, 0: one collective per tensor), filled from
    the last tensor backwards, so that an engine that runs graph nodes as their inputs are
    ready can start the last layers' buffer while the backward pass goes on. So a
    training step that averages its gradients stays one compiled function, with
    one collective per dtype and buffer. A joined worker contributes zeros, and a mean divides by the
    number of workers that are not joined.

    Args:
        tensors: a symbolic tensor or variable of the active adapter, or a list/tuple of
            them (any shapes; float or int dtypes).
        average: True: the mean over workers; False: the sum (Horovod's older spelling;
            default: the mean).
        op: :data:`Average` or :data:`Sum` (wins over ``average``; both given and
            different: ValueError).
        compression: :attr:`Compression.none` (default) or :attr:`Compression.fp16`: float
            tensors travel as float16 and come back in their own dtype.

    Returns:
        A tensor (or list) of the same shapes and dtypes. With one worker, ``tensors``
        itself. The gradient of the result is the same allreduce of the incoming
        gradient (TensorFlow, Theano/PyTensor, JAX). The mean of integers is rounded
        toward zero.

    Raises:
        ValueError: before :func:`init`; ``average`` contradicts ``op``.
        TypeError: ``tensors`` holds something that is not a tensor; ``op``, ``average``
            or ``compression`` of the wrong type.
        WorkerLost: (when the compiled function runs) a peer died or timed out.

    Example:
        >>> g = K.placeholder(shape=(3,))
        >>> f = K.function([g], [kd.allreduce(g, op=kd.Sum)])
        >>> f([np.ones(3) * (kd.rank() + 1)])   # on 2 workers   # doctest: +SKIP
        [array([3., 3., 3.], dtype=float32)]
    """
    _need_init('allreduce')
    mean = _reduce_op('allreduce', average, op)
    compression = _check_compression('allreduce', compression)
    single = not isinstance(tensors, (list, tuple))
    items = [tensors] if single else list(tensors)
    if _State.size == 1:
        return tensors if single else items
    K = _adapter()
    for i, t in enumerate(items):
        if not K.is_tensor(t) and not _is_variable(K, t):
            raise TypeError('allreduce: item %d must be a tensor or variable of the %s '
                            'adapter, got %r' % (i, _State.engine, type(t).__name__))
    packed = [compression.compress(t) for t in items]
    sums, count = _sum_active(K, [p[0] for p in packed], mean)
    out = []
    for t, (_, ctx), total in zip(items, packed, sums):
        total = compression.decompress(total, ctx)
        if mean:
            total = _divide(K, total, count)
        shape = getattr(t, '_keras_shape', None)   # the sizes Theano 1.0.5's types cannot hold
        if shape is not None and getattr(total, '_keras_shape', None) is None:
            try:
                total._keras_shape = shape
            except AttributeError:
                pass
        out.append(total)
    return out[0] if single else out


def _sum_active(K, items, need_count):
    """The sums over the workers of ``items`` (each worker's value times its active flag)
    and, when ``need_count``, the number of active workers (a scalar tensor, float32)."""
    active = _active_flag(K)
    out = [None] * len(items)
    groups = {}
    dynamic = []
    for i, t in enumerate(items):
        shape = K.int_shape(t)
        if shape is None or any(d is None for d in shape):
            dynamic.append(i)
        else:
            groups.setdefault(_dtype_name(K, t), []).append((i, tuple(shape)))
    count = None
    threshold = fusion_threshold()
    previous = None
    for dt, members in sorted(groups.items()):
        flag = K.reshape(K.cast(active, dt), (1,))
        itemsize = int(''.join(c for c in dt if c.isdigit()) or 32) // 8   # bfloat16 too
        for b, bucket in enumerate(_buckets(members, itemsize, threshold)):
            # the active flag travels in the first buffer of the first dtype
            parts = [K.reshape(items[i], (-1,)) for i, _ in bucket]
            flat = K.concatenate(parts, axis=0) if len(parts) > 1 else parts[0]
            send = [flat * flag]
            with_flag = count is None and b == 0
            if with_flag:
                send.append(flag)
            if previous is not None:
                # one value of the previous buffer's result rides along (and is left out):
                # every worker then runs the buffers' collectives in this order, also an
                # engine that runs independent nodes in any order (TensorFlow's executor;
                # two workers waiting in different collectives would wait for ever)
                send.append(K.cast(K.stop_gradient(previous[:1]), dt))
            send = K.concatenate(send, axis=0) if len(send) > 1 else send[0]
            red = _State.impl.allreduce_tensor(K, send, False, _State)
            previous = red
            start = 0
            for i, shape in bucket:
                n = int(np.prod(shape, dtype=np.int64))
                out[i] = K.reshape(red[start:start + n], shape)
                start += n
            if with_flag:
                count = K.cast(K.sum(red[start:start + 1]), 'float32')
    for i in dynamic:   # sizes known only at run time: a collective of its own
        t = items[i]
        out[i] = _State.impl.allreduce_tensor(K, t * K.cast(active, _dtype_name(K, t)),
                                              False, _State)
    if need_count and count is None:
        count = K.sum(_State.impl.allreduce_tensor(K, K.reshape(active, (1,)), False,
                                                   _State))
    return out, count


def _divide(K, total, count):
    """``total`` over ``max(count, 1)``; integers rounded toward zero."""
    dt = _dtype_name(K, total)
    n = K.maximum(count, 1.0)
    if dt.startswith('float'):
        return total / K.cast(n, dt)
    return K.cast(K.cast(total, 'float32') / n, dt)


def _is_variable(K, t):
    try:
        return bool(K.is_variable(t))
    except Exception:
        return False


def allreduce_values(values, average=None, op=None):
    """The sum (or mean) over every worker of numpy values, as numpy (for metrics).

    Eager: it runs now, on every worker, and ignores :func:`join`'s active flags (every
    worker's values count).

    Args:
        values: an array-like or number, or a list/tuple of them; numbers of one dtype
            go through one collective.
        average: True: the mean; False: the sum (default: the mean).
        op: :data:`Average` or :data:`Sum` (wins over ``average``; both given and
            different: ValueError).

    Returns:
        numpy arrays of the same shapes (a list when ``values`` is a list). The mean of
        integers is a float64 array.

    Raises:
        ValueError: before :func:`init`; a value that is not numeric; ``average``
            contradicts ``op``.
        TypeError: ``op`` or ``average`` of the wrong type.
        WorkerLost: a peer died or timed out.

    Example:
        >>> kd.allreduce_values(float(kd.rank()))      # on 2 workers   # doctest: +SKIP
        array(0.5)
    """
    _need_init('allreduce_values')
    average = _reduce_op('allreduce_values', average, op)
    single = not isinstance(values, (list, tuple))
    arrays = []
    for i, v in enumerate([values] if single else values):
        a = np.asarray(v)
        if a.dtype.kind not in 'biuf':
            raise ValueError('allreduce_values: item %d must be numeric, got dtype %s'
                             % (i, a.dtype))
        if a.dtype.kind == 'b':
            a = a.astype(np.int32)
        if average and a.dtype.kind in 'iu':
            a = a.astype(np.float64)
        arrays.append(a)
    if _State.size > 1:
        arrays = _reduce_arrays(arrays, average)
    elif average:
        arrays = [np.array(a) for a in arrays]
    return arrays[0] if single else arrays


def _reduce_arrays(arrays, average):
    """One engine collective per dtype over the concatenated arrays."""
    out = [None] * len(arrays)
    groups = {}
    for i, a in enumerate(arrays):
        groups.setdefault(a.dtype.str, []).append(i)
    for _, members in sorted(groups.items()):
        flat = np.concatenate([arrays[i].ravel() for i in members]) if members else None
        red = np.asarray(_State.impl.allreduce_array(flat, average, _State))
        start = 0
        for i in members:
            n = arrays[i].size
            out[i] = red[start:start + n].reshape(arrays[i].shape).astype(arrays[i].dtype)
            start += n
    return out


def broadcast_values(values, root=0):
    """Every worker gets worker ``root``'s numpy values (a value or a list of them).

    Built on the engine's allreduce: the root's values plus zeros from the others,
    which is exact for every finite or infinite value.

    Raises:
        ValueError: before :func:`init`; ``root`` not in 0 .. size() - 1; workers whose
            values differ in shape.
        WorkerLost: a peer died or timed out.
    """
    _need_init('broadcast_values')
    _check_root('broadcast_values', root)
    single = not isinstance(values, (list, tuple))
    arrays = [np.asarray(v) for v in ([values] if single else values)]
    if _State.size > 1:
        kinds = [a.dtype for a in arrays]
        sent = [(a if _State.rank == root else np.zeros_like(a)).astype(
            np.int32 if a.dtype.kind == 'b' else a.dtype) for a in arrays]
        arrays = [r.astype(k) for r, k in zip(_reduce_arrays(sent, False), kinds)]
    return arrays[0] if single else arrays


def _check_root(fname, root, arg='root'):
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)):
        raise TypeError('%s: %s must be an int rank, got %r' % (fname, arg, root))
    if not 0 <= int(root) < _State.size:
        raise ValueError('%s: %s must be in 0 .. %d, got %d'
                         % (fname, arg, _State.size - 1, root))


def broadcast_variables(variables, root=0):
    """Set every worker's ``variables`` (adapter variables: a model's weights, an
    optimizer's slots) to worker ``root``'s values, so that all start equal.

    Raises:
        ValueError: before :func:`init`; ``root`` out of range.
        WorkerLost: a peer died or timed out.

    Example:
        >>> kd.broadcast_variables(model.weights, root=0)   # doctest: +SKIP
    """
    _need_init('broadcast_variables')
    _check_root('broadcast_variables', root)
    variables = list(variables)
    if _State.size == 1 or not variables:
        return
    K = _adapter()
    values = broadcast_values(K.batch_get_value(variables), root)
    K.batch_set_value(list(zip(variables, values)))


def broadcast(tensor, root_rank=0):
    """Every worker gets worker ``root_rank``'s value of a symbolic tensor, in the graph.

    Built on the engine's allreduce (sum): the root sends its tensor, the others zeros.
    The gradient (Horovod's): on the root, the sum over the workers of the incoming
    gradients; zeros on the others.

    Args:
        tensor: a symbolic tensor or variable of the active adapter (any shape, float or
            int dtype); the same shape on every worker.
        root_rank: int in 0 .. size() - 1.

    Returns:
        A tensor of ``tensor``'s shape and dtype; with one worker, ``tensor`` itself.

    Raises:
        ValueError: before :func:`init`; ``root_rank`` out of range.
        TypeError: ``root_rank`` is not an int; ``tensor`` is not a tensor.

    Example:
        >>> b = kd.broadcast(K.variable(np.full(2, kd.rank())), root_rank=1)
        >>> K.eval(b)                             # on 2 workers   # doctest: +SKIP
        array([1., 1.], dtype=float32)
    """
    _need_init('broadcast')
    _check_root('broadcast', root_rank, 'root_rank')
    if _State.size == 1:
        return tensor
    K = _adapter()
    _check_tensor(K, 'broadcast', 'tensor', tensor)
    # tensor * (1 on the root, else 0): the same graph on every worker (the MPI engines run
    # independent collectives in the graph's order) and a gradient on every worker
    return allreduce(tensor * _rank_mask(K, root_rank, _dtype_name(K, tensor)), op=Sum)


def _rank_mask(K, rank_, dtype):
    """A scalar tensor: 1 on worker ``rank_``, 0 on the others, read from a variable so
    that no engine folds it into a different graph on each worker."""
    if _State.one_hot is None:
        hot = np.zeros(_State.size, np.float32)
        hot[_State.rank] = 1
        _State.one_hot = K.variable(hot, dtype='float32', name='distribute_rank_one_hot')
    return K.cast(_State.one_hot[rank_], dtype)


def _check_tensor(K, fname, arg, t):
    if not K.is_tensor(t) and not _is_variable(K, t):
        raise TypeError('%s: %s must be a tensor or variable of the %s adapter, got %r'
                        % (fname, arg, _State.engine, type(t).__name__))


def allgather(tensor):
    """The workers' values of a symbolic tensor concatenated on axis 0, in rank order, in
    the graph.

    Built on the engine's allreduce (sum): each worker places its tensor in its own slot
    of a zero buffer ``size()`` times as long. So every worker's tensor must have the same
    shape, axis 0 included (an axis 0 of unknown static size is allowed where the engine
    has dynamic shapes, but its run-time size must match on every worker; see
    :func:`allgather_values` for uneven lengths). The gradient (Horovod's): the sum over
    the workers of the incoming gradient, this worker's slot of it.

    Args:
        tensor: a symbolic tensor or variable of the active adapter with at least one axis.

    Returns:
        A tensor of shape ``(size() * n,) + tensor.shape[1:]``; with one worker, ``tensor``.

    Raises:
        ValueError: before :func:`init`; a 0-d tensor.
        TypeError: ``tensor`` is not a tensor.

    Example:
        >>> x = K.placeholder(shape=(2, 3))
        >>> f = K.function([x], [kd.allgather(x)])
        >>> f([np.full((2, 3), kd.rank())])[0].shape       # on 2 workers   # doctest: +SKIP
        (4, 3)
    """
    _need_init('allgather')
    if _State.size == 1:
        return tensor
    K = _adapter()
    _check_tensor(K, 'allgather', 'tensor', tensor)
    if K.ndim(tensor) == 0:
        raise ValueError('allgather: tensor must have at least one axis (it is concatenated '
                         'on axis 0), got a 0-d tensor')
    dt = _dtype_name(K, tensor)
    blocks = [tensor * _rank_mask(K, r, dt) for r in range(_State.size)]
    return allreduce(K.concatenate(blocks, axis=0), op=Sum)


def allgather_values(values):
    """The workers' numpy arrays concatenated on axis 0, in rank order, now.

    The workers' arrays may differ in axis-0 length (as Horovod allows); their other axes
    and dtype must be the same.

    Args:
        values: an array-like with at least one axis (numeric or bool).

    Returns:
        A numpy array of ``values``' dtype: rank 0's rows, then rank 1's, ...

    Raises:
        ValueError: before :func:`init`; a 0-d or non-numeric value; workers whose arrays
            differ in dtype or in an axis other than 0 (raised on every worker).
        WorkerLost: a peer died or timed out.

    Example:
        >>> kd.allgather_values(np.arange(kd.rank() + 1))   # on 2 workers   # doctest: +SKIP
        array([0, 0, 1])
    """
    _need_init('allgather_values')
    a = np.asarray(values)
    if a.ndim == 0:
        raise ValueError('allgather_values: values must have at least one axis, got a 0-d '
                         'value')
    if a.dtype.kind not in 'biuf':
        raise ValueError('allgather_values: values must be numeric, got dtype %s' % a.dtype)
    if _State.size == 1:
        return a.copy()
    # every worker's (rows, dtype, ndim, other sizes) in its row of a table
    width = 3 + 8
    if a.ndim - 1 > 8:
        raise ValueError('allgather_values: values may have at most 9 axes, got %d' % a.ndim)
    mine = np.zeros((_State.size, width), np.int64)
    mine[_State.rank, :3] = (a.shape[0], a.dtype.num, a.ndim)
    mine[_State.rank, 3:3 + a.ndim - 1] = a.shape[1:]
    table = _reduce_arrays([mine], False)[0]
    if len(set(tuple(row[1:]) for row in table)) > 1:
        raise ValueError('allgather_values: the workers\' values differ in dtype or in an axis '
                         'other than 0: %s' % ', '.join(
                             'rank %d: %s of shape %s' % (
                                 r, np.dtype(np.sctypeDict[int(row[1])]).name
                                 if int(row[1]) in np.sctypeDict else row[1],
                                 (int(row[0]),) + tuple(int(d) for d in row[3:2 + row[2]]))
                             for r, row in enumerate(table)))
    rows = [int(n) for n in table[:, 0]]
    longest = max(rows)
    work = a.astype(np.int32) if a.dtype.kind == 'b' else a
    buf = np.zeros((_State.size, longest) + a.shape[1:], work.dtype)
    buf[_State.rank, :a.shape[0]] = work
    total = _reduce_arrays([buf], False)[0]
    return np.concatenate([total[r, :rows[r]] for r in range(_State.size)],
                          axis=0).astype(a.dtype)


# -- join: workers with uneven data ------------------------------------------------------

def _join_round(active):
    """One join round: the number of active workers (every worker calls it as often)."""
    _State.rounds += 1
    return int(round(float(_reduce_arrays([np.array([1.0 if active else 0.0])], False)[0][0])))


class _Joinable(object):
    """The callable :func:`joinable` returns."""

    def __init__(self, step):
        self.step = step
        self.__doc__ = getattr(step, '__doc__', None)

    def __call__(self, inputs):
        if _State.size > 1:
            _join_round(True)
            _State.last_step = (self.step, inputs)
        return self.step(inputs)


def joinable(step):
    """``step`` (a ``K.function``, or any callable of one argument whose graph holds the
    collectives) made ready for :func:`join`: each call first takes part in a join round
    (one small eager allreduce), remembers its inputs, then runs ``step(inputs)``.

    A worker that runs out of data calls :func:`join`, which repeats its last step until
    every worker has joined, so that its collectives still match the others'. Every worker
    must call the joinable step (not ``step`` itself) for every step of the loop.

    Args:
        step: a callable taking one argument (the list of inputs of a ``K.function``).

    Returns:
        A callable with ``step``'s signature and results.

    Raises:
        ValueError: before :func:`init`.
        TypeError: ``step`` is not callable.

    Example:
        >>> step = kd.joinable(K.function([x, y], [loss], updates=updates))
        >>> for xb, yb in my_batches:                       # doctest: +SKIP
        ...     step([xb, yb])
        >>> last = kd.join()
    """
    _need_init('joinable')
    if not callable(step):
        raise TypeError('joinable: step must be callable (a K.function), got %r'
                        % (type(step).__name__,))
    return _Joinable(step)


def join():
    """This worker has run out of data: until every worker has joined, keep running the
    last :func:`joinable` step on its last inputs with this worker's active flag at 0, so
    that it contributes zeros to every in-graph :func:`allreduce` and is left out of their
    means (the others' gradients are averaged without it, and every worker applies the same
    update). Then the flag is 1 again, and training may go on (e.g. the next epoch).

    Returns:
        The rank of the worker that joined last (int; of several that joined in the same
        round, the highest rank). With one worker, 0.

    Raises:
        ValueError: before :func:`init`; on several workers, at once, when this worker ran
            no :func:`joinable` step (plain ``K.function`` steps, Horovod's form, cannot be
            repeated: their collectives would wait for the timeout; the worker's exit
            then stops the job within a second under the launcher, mpirun and Ray).
        WorkerLost: a peer died or timed out.

    Example:
        >>> last = kd.join()                      # after this worker's last batch
        ...                                       # doctest: +SKIP
    """
    _need_init('join')
    if _State.size > 1 and _State.last_step is None and _State.rounds == 0:
        # the other workers' steps, if any, wait in collectives this worker cannot match:
        # say so now (its exit stops the job) rather than wait for the collective timeout
        raise ValueError('join: this worker ran no step made by keras_backend.distribute.'
                         'joinable, so it has no step to repeat while the others train (and '
                         'no join round to take part in). Horovod\'s hvd.join() needs no '
                         'wrapper; here wrap the training step: step = kd.joinable('
                         'K.function(...)), or use kd.JoinCallback() with Keras\' fit')
    return _join(None)


def _join(repeat, protect=()):
    """:func:`join`; ``repeat``: a callable run in place of the last joinable step (the
    Keras callback's), ``protect``: adapter variables each repeated step must not change."""
    if _State.size == 1:
        return 0
    K = _adapter()
    flag = _active_flag(K)
    joined_at = _State.rounds
    K.set_value(flag, np.float32(0.0))
    try:
        while _join_round(False) > 0:
            if repeat is None:
                if _State.last_step is None:
                    raise ValueError('join: the other workers still train, but this worker '
                                     'ran no step made by keras_backend.distribute.joinable '
                                     'to repeat')
                step, inputs = _State.last_step
                run = lambda step=step, inputs=inputs: step(inputs)  # noqa: E731
            else:
                run = repeat
            if protect:
                saved = K.batch_get_value(list(protect))
                run()
                K.batch_set_value(list(zip(protect, saved)))
            else:
                run()
    finally:
        K.set_value(flag, np.float32(1.0))
    order = np.zeros(_State.size, np.int64)
    order[_State.rank] = joined_at
    order = _reduce_arrays([order], False)[0]
    return int(np.flatnonzero(order == order.max())[-1])



def shard(data, global_batch_size):
    """This worker's rows of every global batch of ``data``.

    Training on ``shard(x, B)`` with ``batch_size=B // size()`` and ``shuffle=False``
    makes each of Keras' batches on worker ``r`` the ``r``-th part of the global batch
    that one process would take with ``batch_size=B``; with gradients averaged
    (:func:`DistributedOptimizer`) the workers take the same steps as that process
    whenever each global batch splits evenly (a last, shorter batch split into unequal
    parts weighs its samples unequally).

    Args:
        data: a numpy array (or a list of them, Keras' multi-input form), samples first.
        global_batch_size: int >= size(), the batch one process would take.

    Returns:
        The same type, holding this worker's rows (global batch by global batch, each
        split into ``size()`` parts as ``np.array_split`` does).

    Raises:
        ValueError: ``global_batch_size`` < size(), or arrays of different lengths.

    Example:
        >>> kd.shard(np.arange(8), 4)      # worker 1 of 2   # doctest: +SKIP
        array([2, 3, 6, 7])
    """
    _need_init('shard')
    if isinstance(global_batch_size, bool) or not isinstance(global_batch_size,
                                                             (int, np.integer)):
        raise TypeError('shard: global_batch_size must be an int, got %r'
                        % (global_batch_size,))
    if global_batch_size < _State.size:
        raise ValueError('shard: global_batch_size must be >= size() = %d, got %d'
                         % (_State.size, global_batch_size))
    if isinstance(data, (list, tuple)):
        lengths = set(len(d) for d in data)
        if len(lengths) > 1:
            raise ValueError('shard: the arrays have different numbers of samples: %s'
                             % sorted(lengths))
        return type(data)(shard(d, global_batch_size) for d in data)
    data = np.asarray(data)
    if _State.size == 1:
        return data
    return data[shard_indices(len(data), global_batch_size, _State.rank, _State.size)]


def shard_indices(n, global_batch_size, rank, size):
    """The sample indices that :func:`shard` gives worker ``rank`` of ``size`` out of
    ``n`` samples: for each global batch ``[k * B, min((k + 1) * B, n))``, its ``rank``-th
    part as ``np.array_split`` makes ``size`` parts (an int64 array)."""
    parts = [np.array_split(np.arange(start, min(start + global_batch_size, n)), size)[rank]
             for start in range(0, n, global_batch_size)]
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros((0,), np.int64)


