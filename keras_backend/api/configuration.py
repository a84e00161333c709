"""Configuration: the process-wide settings: engine name, floatx, epsilon, image data format.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
import textwrap

from .. import engines
from ..checks import DATA_FORMATS, DF, T, choice, number

TITLE = 'Configuration'
NAMES = ('backend', 'epsilon', 'set_epsilon', 'floatx', 'set_floatx', 'cast_to_floatx',
         'image_data_format', 'set_image_data_format', 'normalize_data_format',
         'image_dim_ordering', 'set_image_dim_ordering')
SPECS = {}
DOCS = {}


def _backend_names_text():
    """The backend names of the engine table in words, each name served by several
    configurations followed by them: ``'theano'`` (PyTensor or Theano 1.0.5)."""
    parts = []
    for name in engines.names():
        rows = engines.configurations(name)
        text = '``%r``' % name
        if len(rows) > 1:
            text += ' (%s)' % ' or '.join(row.release for row in rows)
        parts.append(text)
    return ', '.join(parts[:-1]) + ' or ' + parts[-1]


# ---------------------------------------------------------------------------
# backend
# ---------------------------------------------------------------------------

SPECS['backend'] = ({}, [])

DOCS['backend'] = """Name of the engine adapter in use.

Keras 2 code reads this string to take engine-specific paths (for example
the kernel flipping of Theano convolutions).

Returns:
""" + textwrap.fill('A ``str``, one of the backend names of the engine table '
                    '(``keras_backend.engines``): %s.' % _backend_names_text(),
                    width=76, initial_indent='    ', subsequent_indent='    ') + """

Example:
    >>> K.backend() in """ + repr(engines.names()) + """
    True
"""


# ---------------------------------------------------------------------------
# epsilon
# ---------------------------------------------------------------------------

SPECS['epsilon'] = ({}, [])

DOCS['epsilon'] = """Small positive number that numeric code adds to avoid dividing by zero.

Losses, metrics, normalisation and optimizers use it as a fuzz factor. The
value comes from the ``epsilon`` key of ``keras.json`` (``1e-7`` by default)
and can be changed for the whole process with ``set_epsilon``.

Returns:
    A Python ``float``.

Example:
    >>> K.epsilon()
    1e-07
"""


# ---------------------------------------------------------------------------
# set_epsilon
# ---------------------------------------------------------------------------

SPECS['set_epsilon'] = ({'e': number(0, open_min=True, allow_tensor=False)}, [])

DOCS['set_epsilon'] = """Change the fuzz factor that ``epsilon()`` returns, for the whole process.

Only code that reads ``epsilon()`` afterwards sees the new value; tensors
built before keep the value they were built with.

Arguments:
    e: A finite, positive ``int`` or ``float`` (``bool`` is refused); it is
        stored as a Python ``float``.

Raises:
    TypeError: If ``e`` is not a number (a ``bool`` included).
    ValueError: If ``e`` is not finite and positive.

Example:
    >>> old = K.epsilon()
    >>> K.set_epsilon(1e-5)
    >>> K.epsilon()
    1e-05
    >>> K.set_epsilon(old)
"""


# ---------------------------------------------------------------------------
# floatx
# ---------------------------------------------------------------------------

SPECS['floatx'] = ({}, [])

DOCS['floatx'] = """Name of the default float dtype.

Every function with a ``dtype=None`` argument (``variable``, ``constant``,
``placeholder``, ``zeros``, the random functions...) creates tensors of this
dtype. The value comes from the ``floatx`` key of ``keras.json``
(``'float32'`` by default) and can be changed with ``set_floatx``.

Returns:
    A ``str``: ``'float16'``, ``'float32'`` or ``'float64'``.

Example:
    >>> K.floatx()
    'float32'
    >>> K.dtype(K.variable(1.)) == K.floatx()
    True
"""


# ---------------------------------------------------------------------------
# set_floatx
# ---------------------------------------------------------------------------

SPECS['set_floatx'] = ({'floatx': choice(('float16', 'float32', 'float64'),
                                              type_error=ValueError)}, [])

DOCS['set_floatx'] = """Change the default float dtype that ``floatx()`` returns.

Tensors created afterwards with ``dtype=None`` take the new dtype; existing
ones keep theirs.

Arguments:
    floatx: ``'float16'``, ``'float32'`` or ``'float64'``.

Raises:
    TypeError: If ``floatx`` is not a string.
    ValueError: If ``floatx`` is any other value (integer dtypes included).

Example:
    >>> old = K.floatx()
    >>> K.set_floatx('float64')
    >>> K.floatx(), K.dtype(K.variable(1.))
    ('float64', 'float64')
    >>> K.set_floatx(old)
"""


# ---------------------------------------------------------------------------
# cast_to_floatx
# ---------------------------------------------------------------------------

SPECS['cast_to_floatx'] = ({'x': T}, [])

DOCS['cast_to_floatx'] = """Convert a numpy value to a numpy array of the default float dtype.

This works on numpy data only, not on tensors: use ``cast`` for those.

Arguments:
    x: A numpy array, a (nested) list of numbers or a scalar.

Returns:
    A numpy array (not a tensor) of ``x``'s shape and dtype ``floatx()``; a
    scalar gives a 0-d array.

Raises:
    TypeError: If ``x`` is not numeric (``None``, a string, a list holding other
        objects).
    ValueError: If numpy cannot read ``x`` as an array (ragged lists).

Example:
    >>> K.cast_to_floatx([1, 2])
    array([1., 2.], dtype=float32)
    >>> K.cast_to_floatx(3).shape
    ()
"""


# ---------------------------------------------------------------------------
# image_data_format
# ---------------------------------------------------------------------------

SPECS['image_data_format'] = ({}, [])

DOCS['image_data_format'] = """Default position of the channels axis in image tensors.

Image functions (convolutions, pooling, padding, ``resize_images``,
``bias_add``...) use it when their ``data_format`` argument is ``None``:
``'channels_last'`` means ``(batch, rows, cols, channels)`` and
``'channels_first'`` means ``(batch, channels, rows, cols)`` (and likewise for
1-D and 3-D data). The value comes from the ``image_data_format`` key of
``keras.json`` (``'channels_last'`` by default).

Returns:
    A ``str``: ``'channels_last'`` or ``'channels_first'``.

Example:
    >>> K.image_data_format()
    'channels_last'
"""


# ---------------------------------------------------------------------------
# set_image_data_format
# ---------------------------------------------------------------------------

SPECS['set_image_data_format'] = ({'data_format': choice(DATA_FORMATS, type_error=ValueError)}, [])

DOCS['set_image_data_format'] = """Change the default that ``image_data_format()`` returns.

Arguments:
    data_format: ``'channels_first'`` or ``'channels_last'`` (exactly these
        strings).

Raises:
    TypeError: If ``data_format`` is not a string.
    ValueError: If ``data_format`` is any other value.

Example:
    >>> old = K.image_data_format()
    >>> K.set_image_data_format('channels_first')
    >>> K.image_data_format()
    'channels_first'
    >>> K.set_image_data_format(old)
"""


# ---------------------------------------------------------------------------
# normalize_data_format
# ---------------------------------------------------------------------------

SPECS['normalize_data_format'] = ({'value': DF}, [])

DOCS['normalize_data_format'] = """Check a ``data_format`` argument; ``None`` gives the default.

The image functions call it on their ``data_format`` argument.

Arguments:
    value: ``None`` (meaning ``image_data_format()``), ``'channels_first'``
        or ``'channels_last'``; upper-case letters are accepted.

Returns:
    A ``str``: ``'channels_first'`` or ``'channels_last'``, lower-case.

Raises:
    TypeError: If ``value`` is neither ``None`` nor a string.
    ValueError: If ``value`` is not one of the two formats.

Example:
    >>> K.normalize_data_format('Channels_First')
    'channels_first'
    >>> K.normalize_data_format(None) == K.image_data_format()
    True
"""


# ---------------------------------------------------------------------------
# image_dim_ordering
# ---------------------------------------------------------------------------

SPECS['image_dim_ordering'] = ({}, [])

DOCS['image_dim_ordering'] = """Default channels position in its Keras 1 spelling.

Kept for old code; it reads the same setting as ``image_data_format()``.

Returns:
    A ``str``: ``'th'`` when ``image_data_format()`` is ``'channels_first'``,
    ``'tf'`` when it is ``'channels_last'``.

Example:
    >>> K.image_dim_ordering()
    'tf'
    >>> K.image_dim_ordering() == ('th' if K.image_data_format() == 'channels_first' else 'tf')
    True
"""


# ---------------------------------------------------------------------------
# set_image_dim_ordering
# ---------------------------------------------------------------------------

SPECS['set_image_dim_ordering'] = ({'dim_ordering': choice(('th', 'tf'), type_error=ValueError)},
                                   [])

DOCS['set_image_dim_ordering'] = """Change the default channels position (Keras 1 spelling).

Kept for old code: ``'th'`` sets ``image_data_format()`` to
``'channels_first'`` and ``'tf'`` sets it to ``'channels_last'``.

Arguments:
    dim_ordering: ``'th'`` or ``'tf'``.

Raises:
    TypeError: If ``dim_ordering`` is not a string.
    ValueError: If ``dim_ordering`` is any other value.

Example:
    >>> old = K.image_data_format()
    >>> K.set_image_dim_ordering('th')
    >>> K.image_data_format(), K.image_dim_ordering()
    ('channels_first', 'th')
    >>> K.set_image_data_format(old)
"""
