"""The API contract, declared once: its names, their order, their argument rules, their docs.

One module per section of the API reference (``configuration``, ``session``,
``tensors``, ..., ``locally_connected``; :data:`SECTION_MODULES`) holds the contract of
each of its names side by side: its argument rules (``SPECS[name]``, in the
vocabulary of :mod:`keras_backend.checks`) and its one docstring (``DOCS[name]``).
This package gathers them: :data:`SECTIONS`, :data:`API_NAMES`, :data:`SPECS`,
:data:`DOCS`.

Every engine package (the ``adapter`` column of the engine table,
:data:`keras_backend.engines.TABLE`) defines the public functions listed in
:data:`SECTIONS` in one module per section, named as the section's module here
(``<engine>_backend/convolution.py`` beside ``api/convolution.py``), in that order; its
``ops`` module gathers them (:func:`gather`), and its ``__init__.py`` ends with
``api.install(globals(), ops)`` (:func:`install`), which
puts each behind its checks, gives it its docstring (an adapter's own docstring,
when it has one, is a short engine note appended under ``Note:``) and adds the
Keras 1 aliases of :data:`LEGACY_NAMES`, each warning ``DeprecationWarning``.

``tests/test_layout.py`` checks the order; ``tests/test_doc_examples.py`` runs
every docstring's example on every engine that imports here.
"""
import importlib
import inspect
import sys
import warnings

from .. import checks, common, engines
from . import (_legacy_docs, activations, configuration, control_flow, convolution, ctc,
               functions, higher_order, locally_connected, math, random, session, shapes,
               tensors, updates)

#: The section modules, in the order of the API reference (Keras 2.2's backend page,
#: grouped): each holds its ``TITLE``, its ``NAMES`` in reference order, and each
#: name's ``SPECS`` (argument rules) and ``DOCS`` (docstring) side by side.
SECTION_MODULES = (configuration, session, tensors, updates, math, shapes, functions,
                   control_flow, activations, convolution, random, ctc, higher_order,
                   locally_connected)

#: (title, names): the sections of the API reference, in order. Within a
#: section the names follow Keras 2.2's backend page; names that page lacks
#: sit beside their closest relative.
SECTIONS = tuple((m.TITLE, m.NAMES) for m in SECTION_MODULES)

#: Every public name of the Keras 2 backend API (163 names), in reference order.
API_NAMES = tuple(name for _, names in SECTIONS for name in names)

#: Keras 1 names kept for old code; each warns DeprecationWarning.
LEGACY_NAMES = ('lesser', 'lesser_equal', 'deconv2d', 'asymmetric_temporal_padding')

#: name -> its argument rules, ``({argument: checker}, [checks across arguments])``, in the
#: vocabulary of :mod:`keras_backend.checks`; every API name has one.
SPECS = dict((name, spec) for m in SECTION_MODULES for name, spec in m.SPECS.items())

#: name -> its one docstring (the API names and the Keras 1 aliases).
DOCS = dict((name, doc) for m in SECTION_MODULES + (_legacy_docs,)
            for name, doc in m.DOCS.items())

#: The names every adapter takes unchanged from :mod:`keras_backend.common`.
COMMON_NAMES = tuple(n for n in API_NAMES if n in common.__all__)


def missing_api_names(module):
    """Return the sorted API names that ``module`` lacks (empty list when complete)."""
    return sorted(n for n in API_NAMES if not callable(getattr(module, n, None)))


# ---------------------------------------------------------------------------
# Keras 1 aliases, built once on top of any adapter
# ---------------------------------------------------------------------------

def _deprecated(old, new):
    warnings.warn('%s is deprecated (Keras 1); use %s instead' % (old, new),
                  DeprecationWarning, stacklevel=3)


def legacy_aliases(module):
    """Return {name: function} of the Keras 1 aliases, calling ``module``'s API.

    Each alias warns ``DeprecationWarning`` and forwards:
    ``lesser`` -> ``less``, ``lesser_equal`` -> ``less_equal``,
    ``asymmetric_temporal_padding(x, left_pad=1, right_pad=1)`` ->
    ``temporal_padding(x, (left_pad, right_pad))`` and
    ``deconv2d(x, kernel, output_shape, strides, border_mode, dim_ordering)`` ->
    ``conv2d_transpose`` with ``border_mode`` as ``padding`` and
    ``dim_ordering`` ('th'/'tf'/'default') as ``data_format``.
    """
    def lesser(x, y):
        _deprecated('lesser', 'less')
        return module.less(x, y)

    def lesser_equal(x, y):
        _deprecated('lesser_equal', 'less_equal')
        return module.less_equal(x, y)

    def asymmetric_temporal_padding(x, left_pad=1, right_pad=1):
        _deprecated('asymmetric_temporal_padding', 'temporal_padding')
        return module.temporal_padding(x, (left_pad, right_pad))

    def deconv2d(x, kernel, output_shape, strides=(1, 1), border_mode='valid',
                 dim_ordering='default', image_shape=None, filter_shape=None):
        _deprecated('deconv2d', 'conv2d_transpose')
        if dim_ordering == 'default':
            data_format = None
        elif dim_ordering in common.DIM_ORDERINGS:
            data_format = common.DIM_ORDERINGS[dim_ordering]
        else:
            raise ValueError("dim_ordering: unknown value %r; expected 'th', 'tf' or 'default'"
                             % (dim_ordering,))
        return module.conv2d_transpose(x, kernel, output_shape, strides=strides,
                                       padding=border_mode, data_format=data_format)

    aliases = {'lesser': lesser, 'lesser_equal': lesser_equal,
               'asymmetric_temporal_padding': asymmetric_temporal_padding,
               'deconv2d': deconv2d}
    for name, fn in aliases.items():
        fn.__doc__ = _doc_for(name)
    return aliases


# ---------------------------------------------------------------------------
# Attaching the one docstring of each name
# ---------------------------------------------------------------------------

def _doc_for(name):
    return DOCS.get(name)


def _cleandoc(doc):
    """``inspect.cleandoc(doc)``: the first line stripped, the common indentation of the others
    removed, blank lines at either end dropped. An adapter's engine notes are short and hold
    no tabs, so they are cleaned here without ``inspect``'s tab expansion and line loops (each
    adapter's import cleans about 160 of them); a docstring with a tab goes to ``inspect``."""
    if '\t' in doc:
        return inspect.cleandoc(doc)
    lines = doc.split('\n')
    if len(lines) == 1:
        return doc.lstrip()
    margin = min([len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()] or [0])
    lines = [lines[0].lstrip()] + [line[margin:] for line in lines[1:]]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return '\n'.join(lines)


def documented(fn, name, engine=None):
    """Give ``fn`` the docstring of API name ``name``, keeping its engine note.

    ``fn.__doc__``, when set by the adapter, is a short engine note (which
    engine op does the work, any engine limit); it is kept as
    ``fn.engine_note`` and appended to the shared text under ``Note:``.
    """
    doc = _doc_for(name)
    if doc is None:
        return fn
    # the shared texts are written flush left (tests/test_doc_examples.py checks it), so
    # stripping them is ``inspect.cleandoc``, at a hundredth of its cost: every adapter's
    # import documents its 163 names
    text = doc.strip()
    note = checks.own_attribute(fn, 'engine_note', None)
    if note is None:
        note = _cleandoc(fn.__doc__) if fn.__doc__ else ''
        if note == text:
            note = ''
    if note and engine:
        if not note.startswith(engine):
            note_text = '%s: %s' % (engine, note)
        else:
            note_text = note
        text += '\n\nNote:\n    %s' % note_text.replace('\n', '\n    ')
    try:
        fn.__doc__ = text
        fn.engine_note = note
    except (AttributeError, TypeError):
        pass
    return fn


#: engine (the adapters' ``ENGINE``) -> the name shown to users (the engine table's
#: ``title`` column, :data:`keras_backend.engines.ENGINE_TITLES`)
ENGINE_TITLES = engines.ENGINE_TITLES


def gather(namespace, modules):
    """Put every name of ``modules`` into ``namespace`` where it lacks it, private helpers
    included: an engine's ``ops`` module gathers its section modules (``tensors``, ``math``,
    ..., named as the sections here) this way, and :func:`install` then copies them all onto
    the adapter."""
    for module in modules:
        for name, value in vars(module).items():
            if not name.startswith('__'):
                namespace.setdefault(name, value)



def gather_sections(namespace):
    """:func:`gather` of the section modules of the engine package whose ``ops`` module's
    namespace is ``namespace``: imports ``<package>.<section>`` for each section of
    :data:`SECTION_MODULES`, in their order, keeps them as ``_MODULES`` and gathers their
    names."""
    package = namespace['__name__'].rsplit('.', 1)[0]
    modules = tuple(importlib.import_module('%s.%s' % (package, m.__name__.rsplit('.', 1)[1]))
                    for m in SECTION_MODULES)
    namespace['_MODULES'] = modules
    gather(namespace, modules)

def install(namespace, ops):
    """Make an engine package's namespace the public adapter: the checked API.

    ``namespace`` is the ``globals()`` of the adapter package
    (``keras_backend.<engine>_backend/__init__.py``); ``ops`` is the engine's
    ``ops`` module, whose functions are the engine-level API functions: they
    call each other directly, never through the checks. ``install``

    * copies every name of ``ops`` that ``namespace`` lacks (the private
      helpers that Keras 2.3.1 and libraries read, such as TensorFlow's
      ``_is_tf_1``);
    * gives each API function of ``ops`` its one docstring (:func:`documented`;
      an adapter's own docstring becomes the engine note, shown under the
      title of ``ops.ENGINE``) and puts it into ``namespace`` behind its
      argument checks (:func:`keras_backend.checks.wrap`, checking against
      ``ops``);
    * adds the Keras 1 aliases of :data:`LEGACY_NAMES`;
    * lets Keras 2.3.1 see the engine's name
      (:func:`keras_backend.keras2_compat.adopt_engine_name`).

    An engine's own per-op wrapper (TensorFlow's graph placement, the
    ``_keras_shape`` that Theano-style engines record) is a decorator in its
    ``core`` module, applied where the op is defined (in its section's module).
    """
    module = sys.modules[namespace['__name__']]
    for name, value in vars(ops).items():
        if not name.startswith('__'):
            namespace.setdefault(name, value)
    engine = ENGINE_TITLES.get(str(ops.ENGINE).lower(), str(ops.ENGINE))
    common_names = frozenset(COMMON_NAMES)
    for name in API_NAMES:
        fn = getattr(ops, name, None)
        if fn is None:
            continue
        documented(fn, name, None if name in common_names else engine)
        namespace[name] = checks.wrap(fn, name, ops, SPECS.get(name))
    namespace.update(legacy_aliases(module))
    from .. import keras2_compat
    keras2_compat.adopt_engine_name(module)
