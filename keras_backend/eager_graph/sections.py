"""API functions whose logic is the same on every engine with no graph of its own, written
once and bound to an adapter (see the package's docstring).

Each function here takes the adapter's ``core`` module (``core``), and where the sections
differ by an engine's op, that op; it returns a new function object, which the adapter's
section module binds to the API name (``update = sections.update(core)``), so that each
engine's function carries its own engine note (``doc``: appended to the API's docstring by
``keras_backend.api.install``). The functions read ``core`` when they run.
"""
import contextlib

from .. import common, engines, shape_rules
from . import graph


def _noted(fn, doc):
    fn.__doc__ = doc
    return fn


# ---------------------------------------------------------------------------
# session (keras_backend.api.session)
# ---------------------------------------------------------------------------

def clear_session(core, doc=None, also=None):
    """``clear_session``: resets uids and the fixed learning phase, drops the functions
    ``eval`` kept (``core._EVAL_CACHE``), then calls ``also()`` (the engine's own caches)
    where given."""
    def clear_session():
        common._reset_session_state()
        core._EVAL_CACHE.clear()
        if also is not None:
            also()
    return _noted(clear_session, doc)


def get_session(core, doc=None):
    """``get_session``: the stand-in session (``core._SESSION[0]``)."""
    def get_session():
        return core._SESSION[0]
    return _noted(get_session, doc)


def set_session(core, doc=None):
    """``set_session``: replaces the stand-in session; any object with a ``run(fetches,
    feed_dict)``."""
    def set_session(session):
        if not callable(getattr(session, 'run', None)):
            raise ValueError('set_session: expected an object with a run(fetches, '
                             'feed_dict) method, got %r' % (session,))
        core._SESSION[0] = session
    return _noted(set_session, doc)


def learning_phase(core, doc=None):
    """``learning_phase``: the fixed phase where one is set, else the placeholder
    ``core._LEARNING_PHASE``."""
    def learning_phase():
        fixed = common._fixed_learning_phase()
        if fixed is not None:
            return fixed
        return core._LEARNING_PHASE
    return _noted(learning_phase, doc)


def name_scope(doc=None):
    """``name_scope``: names the variables and placeholders made inside
    (``scope/name``)."""
    @contextlib.contextmanager
    def name_scope(name):
        with common._name_scope_stack(name):
            yield name
    return _noted(name_scope, doc)


# ---------------------------------------------------------------------------
# updates (keras_backend.api.updates): pending updates (``core._make_update``)
# ---------------------------------------------------------------------------

def update(core, doc=None):
    def update(x, new_x):
        return core._make_update(x, new_x)
    return _noted(update, doc)


def update_add(core, doc=None):
    def update_add(x, increment):
        return core._make_update(x, x + core._to_tensor(increment))
    return _noted(update_add, doc)


def update_sub(core, doc=None):
    def update_sub(x, decrement):
        return core._make_update(x, x - core._to_tensor(decrement))
    return _noted(update_sub, doc)


def moving_average_update(core, doc='``x <- x * momentum + value * (1 - momentum)``.'):
    def moving_average_update(x, value, momentum):
        value = core._to_tensor(value)
        return core._make_update(x, x * momentum + value * (1. - momentum))
    return _noted(moving_average_update, doc)


# ---------------------------------------------------------------------------
# functions (keras_backend.api.functions)
# ---------------------------------------------------------------------------

def control_dependencies(core, doc=None):
    """``control_dependencies``: ops made inside the block come after the updates among
    ``control_inputs`` (``core._CONTROLS``, the open groups)."""
    def control_dependencies(control_inputs):
        return graph.control_dependencies(core._CONTROLS, control_inputs)
    return _noted(control_dependencies, doc)


# ---------------------------------------------------------------------------
# random (keras_backend.api.random): ``draw(shape, a, b, dtype, seed)`` of the engine
# ---------------------------------------------------------------------------

def random_normal(draw, normal, doc=None):
    def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
        return draw(normal, shape, mean, stddev, dtype, seed)
    return _noted(random_normal, doc)


def random_uniform(draw, uniform, doc=None):
    def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
        return draw(uniform, shape, minval, maxval, dtype, seed)
    return _noted(random_uniform, doc)


def random_binomial(draw, binomial, doc='1 where a uniform draw is below ``p``, else 0.'):
    def random_binomial(shape, p=0.0, dtype=None, seed=None):
        return draw(binomial, shape, p, 0., dtype, seed)
    return _noted(random_binomial, doc)


def truncated_normal(draw, truncated, doc=None):
    def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
        return draw(truncated, shape, mean, stddev, dtype, seed)
    return _noted(truncated_normal, doc)


# ---------------------------------------------------------------------------
# locally_connected (keras_backend.api.locally_connected)
# ---------------------------------------------------------------------------
# ``products(patches, k, v)``: the engine's ``einsum('bpf,pfo->bpo')`` of the patches
# (a list of (batch, features) values, stacked on axis 1) and the kernel ``k`` (cast to
# ``v``'s dtype); ``cf(y, data_format)`` / ``cl(v, data_format)``: channels_last to the
# data format and back (the adapter's convolution helpers)

def local_conv1d(core, products, cf, cl,
                 doc='One product per output position (an einsum over the stacked '
                     'patches).'):
    def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
        data_format = common.normalize_data_format(data_format)
        k_size = shape_rules.normalize_tuple(kernel_size, 1, 'kernel_size')[0]
        stride = shape_rules.normalize_tuple(strides, 1, 'strides')[0]

        def op(v, k):
            v = cl(v, data_format)
            n_out = k.shape[0]
            y = products([v[:, i * stride:i * stride + k_size, :].reshape(v.shape[0], -1)
                          for i in range(n_out)], k, v)
            return cf(y, data_format)
        return core._apply(op, core._to_tensor(inputs), core._to_tensor(kernel))
    return _noted(local_conv1d, doc)


def local_conv2d(core, products, cf,
                 doc='One product per output position (an einsum over the stacked patches); '
                     'a channels_first patch is flattened in (channels, rows, cols) order, '
                     'as Keras\'.'):
    def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
        data_format = common.normalize_data_format(data_format)
        kr, kc = shape_rules.normalize_tuple(kernel_size, 2, 'kernel_size')
        sr, sc = shape_rules.normalize_tuple(strides, 2, 'strides')
        rows, cols = shape_rules.normalize_tuple(output_shape, 2, 'output_shape')

        def op(v, k):
            ps = []
            for i in range(rows):
                for j in range(cols):
                    if data_format == 'channels_first':
                        p = v[:, :, i * sr:i * sr + kr, j * sc:j * sc + kc]
                    else:
                        p = v[:, i * sr:i * sr + kr, j * sc:j * sc + kc, :]
                    ps.append(p.reshape(v.shape[0], -1))
            y = products(ps, k, v)
            y = y.reshape(v.shape[0], rows, cols, -1)
            return cf(y, data_format)
        return core._apply(op, core._to_tensor(inputs), core._to_tensor(kernel))
    return _noted(local_conv2d, doc)


# ---------------------------------------------------------------------------
# tensors (keras_backend.api.tensors)
# ---------------------------------------------------------------------------

def is_keras_tensor(K, doc='True when ``x`` carries the ``_keras_history`` that Keras '
                           'layers set.'):
    """``is_keras_tensor`` on the engine whose section module ``K`` holds ``is_tensor``."""
    def is_keras_tensor(x):
        if not K.is_tensor(x):
            raise ValueError('is_keras_tensor: unexpectedly found an instance of type %s; '
                             'expected a symbolic tensor' % (type(x).__name__,))
        return hasattr(x, '_keras_history')
    return _noted(is_keras_tensor, doc)


def placeholder(core, doc='A graph input; ``None`` sizes are unknown until fed. '
                          '``sparse=True`` takes scipy\n    sparse feeds, held dense.'):
    """``placeholder``: a ``core.Placeholder`` of the shape given (or of ``ndim`` unknown
    sizes), named in the name scope (or ``placeholder_<n>``)."""
    def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
        dtype = core._normalize_dtype(dtype)
        if shape is None:
            if ndim is None:
                raise ValueError('placeholder: give shape or ndim (%s needs the rank)'
                                 % engines.title(core.ENGINE))
            shape = (None,) * int(ndim)
        shape = tuple(None if s is None else int(s) for s in shape_rules.as_dims(shape))
        name = common._scoped_name(name, 'placeholder') or 'placeholder_%d' % next(graph.IDS)
        x = core.Placeholder(shape, dtype, name=name, sparse=sparse)
        x._keras_shape = shape
        x._uses_learning_phase = False
        return x
    return _noted(placeholder, doc)
