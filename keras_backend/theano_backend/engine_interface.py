"""The interface of the Theano adapter's engine modules, written once.

The adapter (:mod:`.core`, the API functions' modules) reaches its engine only through one
engine module, ``core._engine``: :mod:`.theano_engine` (Theano 1.0.5) or
:mod:`.pytensor_engine` (PyTensor).
Each provides every name of :data:`INTERFACE`, in this order, as its ``__all__``; what an
engine does differently is said in its module's docstring. :func:`missing` gives the names
an engine module lacks (``tests/test_theano_specific.py`` checks each engine module that
imports).
"""

#: (name, contract) of every name an engine module provides, in its ``__all__`` order
INTERFACE = (
    ('th',
     'the engine package.'),
    ('T',
     "the engine's tensor module."),
    ('ENGINE',
     "the engine's name, ``'theano'`` or ``'pytensor'``."),
    ('ENGINE_VERSION',
     "the engine package's version string."),
    ('FLAGS_ENV',
     "the environment variable of the engine's flags (``key=value,...``)."),
    ('RC_FILES',
     "the engine's configuration files (``~`` for the home folder)."),
    ('HAS_STATIC_SHAPES',
     'True when tensor types hold static sizes, not only broadcast flags.'),
    ('Op',
     'the base class of graph operations.'),
    ('Apply',
     'the class of graph nodes (an op applied to its inputs).'),
    ('Variable',
     'the class of every graph variable (tensors, shared, sparse).'),
    ('Constant',
     'the class of graph constants.'),
    ('SharedVariable',
     'the class of shared variables (what ``variable`` makes).'),
    ('SparseType',
     'the type class of sparse tensors.'),
    ('sparse',
     "the engine's sparse module (``csr_matrix``, ``shared``, ``CSR``, ...)."),
    ('Print',
     "the engine's printing op class (``Print(message)(x)``)."),
    ('ancestors',
     '``ancestors(roots)``: the variables the graphs of ``roots`` depend on, roots '
     'included.'),
    ('disconnected_grad',
     '``disconnected_grad(x)``: ``x`` with its gradient blocked.'),
    ('input_tensor',
     '``input_tensor(dtype, shape, name=None)``: a symbolic input, typed with what it can '
     'of ``shape``.'),
    ('shared',
     '``shared(value, name=None)``: a shared variable holding ``value``; size-1 axes '
     'broadcast.'),
    ('static_shape',
     "``static_shape(x)``: the engine's static shape of tensor ``x``, a tuple of ints and "
     'None.'),
    ('alloc',
     '``alloc(value, *sizes)``: a tensor of the int / scalar-tensor ``sizes`` filled with the '
     'scalar ``value`` (``T.alloc``), typed with the sizes known when the graph is built.'),
    ('specify_shape',
     '``specify_shape(x, shape)``: ``x`` with the sizes of ``shape`` (ints / None) in its '
     'type.'),
    ('broadcastable_axes',
     '``broadcastable_axes(x, axes)``: ``x`` with the size-1 ``axes`` marked '
     'broadcastable.'),
    ('pattern_broadcast',
     '``pattern_broadcast(x, pattern)``: ``x`` with the bool ``pattern`` as its broadcast '
     'pattern.'),
    ('fix_broadcast',
     '``fix_broadcast(outs)``: the graphs of ``outs`` with every static size-1 axis '
     'broadcasting.'),
    ('flatten',
     '``flatten(x)``: ``x`` as a 1-D tensor.'),
    ('batched_dot',
     '``batched_dot(a, b)``: ``(B, n, k) x (B, k, m) -> (B, n, m)``.'),
    ('conv2d',
     "``conv2d(x_cl, kernel, strides, dilation, pads, flip=False)``: the engine's own 2-D "
     'correlation of ``(B, H, W, C)`` with ``(kh, kw, C, out)`` (its spatial axes reversed'
     ' when ``flip``: a convolution) and symmetric int ``pads`` per axis, channels_last, '
     'or None where the engine has none fit to run it.'),
    ('conv3d',
     "``conv3d(x_cl, kernel, strides, dilation, pads, flip=False)``: the same in 3-D, "
     '``(B, D, H, W, C)`` with ``(kd, kh, kw, C, out)``.'),
    ('conv_transpose',
     "``conv_transpose(x_cl, kernel, out_shape, strides, dilation, pads, flip=False)``: the "
     "engine's own gradient, w.r.t. its input, of the 2-D or 3-D correlation (convolution "
     'when ``flip``) of an image of channels_last ``out_shape`` (batch None or int) with '
     '``kernel`` ``(*K, out, in)`` and symmetric int ``pads``, taken at ``x_cl`` '
     '``(B, *S, in)``, or None where the engine has none fit to run it.'),
    ('depthwise_conv2d',
     "``depthwise_conv2d(x_cl, kernel, strides, dilation, pads)``: the engine's own grouped "
     '2-D correlation of ``(B, H, W, C)`` with ``(kh, kw, C, M)`` (output channel '
     '``c * M + m``), symmetric int ``pads``, or None where the engine has none.'),
    ('pool',
     "``pool(x_cl, pool_size, strides, mode)``: the engine's own pooling op ('max' or "
     "'avg') of channels_last ``(B, *S, C)`` over its ``len(pool_size)`` spatial axes, "
     "unpadded windows that fit (Keras' 'valid'), or None where the engine has none."),
    ('absolute',
     '``absolute(x)``: elementwise absolute value.'),
    ('sign',
     '``sign(x)``: elementwise sign (-1, 0, 1).'),
    ('sigmoid',
     '``sigmoid(x)``: elementwise logistic sigmoid.'),
    ('softplus',
     '``softplus(x)``: elementwise ``log(1 + exp(x))``, stable.'),
    ('softmax',
     '``softmax(x, axis)``: softmax along the int ``axis``.'),
    ('log_softmax',
     '``log_softmax(x, axis)``: log-softmax along the int ``axis``, stable.'),
    ('scan',
     '``scan(fn, shape_of, **kwargs)``: the outputs of ``th.scan``; ``shape_of``: static '
     'shapes.'),
    ('default_mode',
     '``default_mode()``: the compile mode when neither caller nor flags chose one (None: '
     "engine's)."),
    ('compiling',
     '``compiling()``: a context manager the adapter compiles in (``th.function``): engine'
     ' flags for compiling.'),
    ('rewrite_failed',
     '``rewrite_failed(exc)``: True when ``exc`` came out of a graph rewrite (optimization)'
     " that failed while compiling, which the engine's default ``on_opt_error='warn'`` "
     'logs and skips.'),
    ('random_draw',
     "``random_draw(kind, seed, size, dtype, **params)``: a seeded 'normal'/'uniform' "
     'draw.'),
    ('rng_mark',
     '``rng_mark()``: a marker of the random draws made so far, for ``rng_updates_since``.'),
    ('rng_updates_since',
     '``rng_updates_since(mark)``: (generator, its next state or None) of the draws since '
     '``mark``.'),
    ('rng_updates',
     '``rng_updates(roots, updated)``: (generator, next state) pairs ``function`` adds for'
     ' ``roots``.'),
    ('freeze_rng',
     '``freeze_rng(rng)``: stop advancing generator ``rng`` between calls.'),
    ('forget_draws',
     '``forget_draws()``: drop the random state that ``clear_session`` drops.'),
    ('assert_true',
     '``assert_true(value, condition, message)``: ``value`` behind a run-time check of '
     '``condition``.'),
    ('provide_theano_names',
     '``provide_theano_names()``: make importable the ``theano`` names Keras 2 libraries '
     'use, when Keras 2.3.1 loads the adapter.'),
    ('theano_1_variable_truth',
     "``theano_1_variable_truth()``: a shared variable is true in an ``if``, as Theano "
     "1.0.5's were (Keras 2.0-2.1's layers ask ``if self.bias:``), when Keras 2.0-2.2 "
     'loads the adapter.'),
)

#: the names alone, in order
NAMES = tuple(name for name, _ in INTERFACE)


def missing(module):
    """The names of :data:`INTERFACE` that the engine ``module`` lacks, plus ``'__all__'``
    when its ``__all__`` is not :data:`NAMES` in order."""
    lacking = [name for name in NAMES if not hasattr(module, name)]
    if tuple(getattr(module, '__all__', ())) != NAMES:
        lacking.append('__all__')
    return lacking
