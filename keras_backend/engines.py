"""The engine table: every engine configuration keras_backend runs on, in one place.

:data:`TABLE` has one row (an :class:`Engine`) per engine configuration. A
*configuration* is one engine package on the interpreters it installs on; the
backend *name* is what users write (``KERAS_BACKEND=theano``) and what
``K.backend()`` answers. Two configurations share the name ``'theano'``:
PyTensor (Theano's successor) on Python 3.10+ and Theano 1.0.5 on Python < 3.8;
the Theano adapter picks whichever imports.

Everything else reads this table instead of listing engines itself:

* :mod:`keras_backend.load_backend` (the adapter module of a name, the
  ``Using <title> backend.`` banner, the names in its error message);
* :mod:`keras_backend.api` (``ENGINE_TITLES``) and the docstring of
  ``K.backend()`` (:mod:`keras_backend.api.configuration`);
* :mod:`keras_backend.config_file` (the names in its ``backend`` error);
* ``python -m keras_backend`` (the engines it probes);
* :mod:`keras_backend.distribute` (the collectives module of each name) and its
  launcher (how the workers of each name start);
* :mod:`keras_backend.keras2_compat` (the Keras 2.3.1 kernel conventions);
* the adapters' ImportError (:func:`engine_import_error`, whose advice is
  :func:`engine_install_advice`);
* the tests' engine list (``tests/conftest.py``), ``tools/keras_suite_plugin.py``
  (the Keras backend module an adapter stands in for), ``.ci/summary.py``, the
  benchmarks (``benchmarks/engine_table.py``) and ``setup.py`` (the engines' pip extras).

``tests/test_layout.py`` fails when a module under ``keras_backend/``,
``tests/``, ``tools/``, ``.ci/`` or ``benchmarks/``, or ``setup.py``, lists engine
names itself.

This module uses the standard library only and imports nothing of this package:
``.ci/summary.py``, ``setup.py`` and the benchmarks load it by its file path, and
it must import on CPython 3.6 (CNTK 2.7's interpreter).

Example:
    >>> names()
    ('tensorflow', 'theano', 'cntk', 'jax', 'torch')
    >>> [(e.engine, e.title) for e in configurations('theano')]
    [('pytensor', 'PyTensor'), ('theano', 'Theano')]
    >>> adapter_module('cntk'), collectives_module('cntk'), worker_start('cntk')
    ('keras_backend.cntk_backend', 'keras_backend.cntk_backend.collectives', 'mpiexec')
"""
import sys

#: how the workers of ``python -m keras_backend.distribute`` find each other (Engine.workers)
WORKERS_TF_CONFIG = 'tf_config'      # one process per worker, TF_CONFIG: a port per worker
WORKERS_COORDINATOR = 'coordinator'  # one process per worker, one coordinator port
WORKERS_MPIEXEC = 'mpiexec'          # one mpiexec -n N; MPI gives each its rank


class Engine(object):
    """One engine configuration: a row of :data:`TABLE`.

    Attributes:
        name: the backend name users configure (``KERAS_BACKEND``, keras.json) and
            ``K.backend()`` answers, e.g. ``'theano'``.
        engine: the adapter's ``ENGINE`` in this configuration (``'pytensor'`` where
            PyTensor serves the name ``'theano'``); every name is also the ``engine``
            of one of its rows, whose ``title`` the loader's banner shows.
        title: the engine's name as users read it, e.g. ``'PyTensor'``.
        release: the release install advice names, e.g. ``'Theano 1.0.5'``.
        package: the Python package the adapter imports, e.g. ``'pytensor'``.
        extra: the pip extra of keras_backend that installs it, e.g. ``'theano'``
            (``pip install "keras_backend[theano]"``; setup.py's ``extras_require``).
        requires: the pip requirements that ``extra`` installs for this configuration
            (with the environment markers that keep each to its interpreters); setup.py
            gathers the extras from them.
        python: ``(lowest, below)``: the interpreters it installs on, ``lowest <=
            version < below``, each a ``(major, minor)`` tuple or None (no bound).
        adapter: the import path of the adapter module.
        collectives: the module that drives its collectives for
            :mod:`keras_backend.distribute`, in the engine's package (the interface of
            :mod:`keras_backend.distribute.collectives`).
        workers: how the launcher starts its workers: :data:`WORKERS_TF_CONFIG`,
            :data:`WORKERS_COORDINATOR` or :data:`WORKERS_MPIEXEC`.
        flips_kernels: Keras 2.3.1's kernel convention of its convolutions: True where
            a kernel is flipped (Theano's true convolution), False for
            cross-correlation (``keras2_compat.need_kernel_conversion``).
        keras2_known_as: where Keras 2.3.1 does not know ``name``, the engine of its own
            whose conventions this one follows and which Keras must see instead: the name
            files saved on it record, the Keras backend module its backend tests take it
            for (JAX: ``'tensorflow'``); None where Keras 2.3.1 knows ``name``.
        install: the advice when this interpreter fits ``python``; a ``str.format``
            template with ``{here}`` (this interpreter) and ``{pip}`` (the pip command).
        elsewhere: the advice when it does not, with ``{here}``, ``{python}`` (the
            range in words), ``{lowest}`` (``'3.11'``) and ``{extra}``; None for a
            name served by several configurations (the advice then lists them all).
    """

    __slots__ = ('name', 'engine', 'title', 'release', 'package', 'extra', 'requires',
                 'python', 'adapter', 'collectives', 'workers', 'flips_kernels',
                 'keras2_known_as', 'install', 'elsewhere')

    def __init__(self, name, engine, title, release, package, extra, python, adapter,
                 collectives, workers, flips_kernels, install, elsewhere=None,
                 keras2_known_as=None, requires=()):
        self.name = name
        self.engine = engine
        self.title = title
        self.release = release
        self.package = package
        self.extra = extra
        self.requires = tuple(requires)
        self.python = python
        self.adapter = adapter
        self.collectives = collectives
        self.workers = workers
        self.flips_kernels = flips_kernels
        self.keras2_known_as = keras2_known_as
        self.install = install
        self.elsewhere = elsewhere

    def runs_on(self, version):
        """True when interpreter ``version`` (``(major, minor)``) is in :attr:`python`."""
        lowest, below = self.python
        version = tuple(version[:2])
        return (lowest is None or version >= lowest) and (below is None or version < below)

    def python_text(self):
        """:attr:`python` in words: ``'Python 3.10+'``, ``'Python < 3.8'``,
        ``'Python 3.5 to 3.6'``."""
        lowest, below = self.python
        if below is None:
            return 'Python %d.%d+' % lowest
        last = '%d.%d' % (below[0], below[1] - 1) if below[1] else '%d.x' % (below[0] - 1)
        if lowest is None:
            return 'Python < %d.%d' % below
        return 'Python %d.%d to %s' % (lowest[0], lowest[1], last)

    def __repr__(self):
        return '<Engine %s (%s, %s)>' % (self.name, self.title, self.python_text())


#: The engine configurations, in the order users see the names (first row of a name first).
TABLE = (
    Engine(name='tensorflow', engine='tensorflow', title='TensorFlow', release='TensorFlow 2',
           package='tensorflow', extra='tensorflow-cpu', python=((3, 9), None),
           # the CPU-only build (setup.py's 'tensorflow' extra is the GPU-capable one)
           requires=('tensorflow-cpu>=2.12',),
           adapter='keras_backend.tensorflow_backend',
           collectives='keras_backend.tensorflow_backend.collectives', workers=WORKERS_TF_CONFIG,
           flips_kernels=False,
           install='Install it for {here} with: {pip}',
           elsewhere='TensorFlow 2 has no wheels for {here}; use a {python} interpreter '
                     '(TensorFlow\'s own range) and install it there with: python3 -m pip '
                     'install "keras_backend[{extra}]"'),
    Engine(name='theano', engine='pytensor', title='PyTensor', release='PyTensor',
           package='pytensor', extra='theano', python=((3, 10), None),
           requires=('pytensor>=2.18; python_version>="3.10"',),
           adapter='keras_backend.theano_backend',
           collectives='keras_backend.theano_backend.collectives', workers=WORKERS_MPIEXEC,
           flips_kernels=True,
           install='Install PyTensor (Theano\'s successor) for {here} with: {pip}'),
    Engine(name='theano', engine='theano', title='Theano', release='Theano 1.0.5',
           package='theano', extra='theano', python=(None, (3, 8)),
           # in its own era: CPython 3.6 with numpy 1.19
           requires=('Theano==1.0.5; python_version<"3.8"', 'numpy<1.20; python_version<"3.8"',
                     'scipy; python_version<"3.8"'),
           adapter='keras_backend.theano_backend',
           collectives='keras_backend.theano_backend.collectives', workers=WORKERS_MPIEXEC,
           flips_kernels=True,
           install='Install Theano 1.0.5 for {here} with: {pip}'),
    Engine(name='cntk', engine='cntk', title='CNTK', release='CNTK 2.7',
           package='cntk', extra='cntk', python=((3, 5), (3, 7)),
           # wheels for CPython 3.5/3.6 only (README)
           requires=('cntk==2.7.post2; python_version<"3.7"',),
           adapter='keras_backend.cntk_backend',
           collectives='keras_backend.cntk_backend.collectives', workers=WORKERS_MPIEXEC,
           flips_kernels=False,
           install='Install it for {here} with: {pip} (CNTK also needs OpenMPI; '
                   'tools/setup_cntk_env.sh does both)',
           elsewhere='CNTK 2.7 has wheels only for CPython 3.5 and 3.6; this is {here}. '
                     'Build its environment with: tools/setup_cntk_env.sh .venv36   (from a '
                     'CPython 3.6, e.g. pyenv\'s), then run your program with '
                     '.venv36/bin/python'),
    Engine(name='jax', engine='jax', title='JAX', release='JAX',
           package='jax', extra='jax', python=((3, 11), None),
           # JAX's CPU wheel; for a GPU, install JAX's CUDA wheel instead (pip install
           # "jax[cuda12]"), see README
           # zstandard: the persistent compilation cache's compressor (zlib without it:
           # several seconds to write a deep model's program)
           requires=('jax>=0.4.30; python_version>="3.11"',
                     'zstandard; python_version>="3.11"'),
           adapter='keras_backend.jax_backend',
           collectives='keras_backend.jax_backend.collectives', workers=WORKERS_COORDINATOR,
           flips_kernels=False, keras2_known_as='tensorflow',
           install='Install it for {here} with: {pip}',
           elsewhere='JAX needs {python}; this is {here}. Install it for a {python} '
                     'interpreter with: python{lowest} -m pip install "keras_backend[{extra}]"'),
    Engine(name='torch', engine='torch', title='PyTorch', release='PyTorch',
           package='torch', extra='torch', python=((3, 10), None),
           # PyTorch's wheels (2.9+) are for CPython 3.10+; the Linux wheel from PyPI brings
           # CUDA's libraries, PyTorch's CPU index (--index-url .../whl/cpu) a CPU-only build
           requires=('torch>=2.4; python_version>="3.10"',),
           adapter='keras_backend.torch_backend',
           collectives='keras_backend.torch_backend.collectives', workers=WORKERS_COORDINATOR,
           flips_kernels=False, keras2_known_as='tensorflow',
           install='Install it for {here} with: {pip}',
           elsewhere='PyTorch needs {python}; this is {here}. Install it for a {python} '
                     'interpreter with: python{lowest} -m pip install "keras_backend[{extra}]"'),
)


def names():
    """The backend names, in table order (each once).

    Returns:
        tuple of str, e.g. ``('tensorflow', 'theano', 'cntk', 'jax', 'torch')``.
    """
    seen = []
    for row in TABLE:
        if row.name not in seen:
            seen.append(row.name)
    return tuple(seen)


#: the backend names (``KERAS_BACKEND`` values of the built-in adapters), in table order
BUILTIN_BACKEND_NAMES = names()


def configurations(name):
    """The rows of backend ``name``, in table order.

    Args:
        name: a backend name such as ``'theano'``.

    Returns:
        tuple of :class:`Engine`; empty for a name not in the table (a custom backend).
    """
    return tuple(row for row in TABLE if row.name == name)


def _first(name):
    rows = configurations(name)
    if not rows:
        raise KeyError('%r is not one of the engines %s' % (name, ', '.join(names())))
    return rows[0]


def adapter_module(name):
    """The import path of the adapter of backend ``name``.

    Raises:
        KeyError: ``name`` is not in the table.

    Example:
        >>> adapter_module('theano')
        'keras_backend.theano_backend'
    """
    return _first(name).adapter


def collectives_module(name):
    """The module that drives the collectives of ``name`` (in its engine package).

    Raises:
        KeyError: ``name`` is not in the table.

    Example:
        >>> collectives_module('theano')
        'keras_backend.theano_backend.collectives'
    """
    return _first(name).collectives


def worker_start(name):
    """How the launcher starts the workers of ``name``: one of :data:`WORKERS_TF_CONFIG`,
    :data:`WORKERS_COORDINATOR`, :data:`WORKERS_MPIEXEC`.

    Raises:
        KeyError: ``name`` is not in the table.
    """
    return _first(name).workers


#: engine (an adapter's ``ENGINE``, or a backend name) -> the name shown to users
ENGINE_TITLES = dict((row.engine, row.title) for row in TABLE)


def following(keras_name):
    """The backend names (``K.backend()``) whose conventions are Keras 2.3.1's backend
    ``keras_name``'s: that name, and the engines Keras must see as it (JAX follows
    TensorFlow's).

    Example:
        >>> sorted(following('tensorflow'))
        ['jax', 'tensorflow', 'torch']
    """
    return frozenset([keras_name] + [r.name for r in TABLE if r.keras2_known_as == keras_name])


def packages():
    """The import names of every engine's package (``tensorflow``, ``pytensor``...)."""
    return frozenset(r.package.split('.')[0] for r in TABLE)


def title(engine):
    """The name users read for ``engine`` (an adapter's ``ENGINE`` or a backend name);
    anything else is returned as it is.

    Example:
        >>> title('pytensor'), title('theano'), title('my_backend')
        ('PyTensor', 'Theano', 'my_backend')
    """
    return ENGINE_TITLES.get(engine, engine)


def canonical_backend(name):
    """Map the import path of one of our adapters to its backend name.

    ``KERAS_BACKEND=keras_backend.cntk_backend`` (the form Keras 2.3.1 takes
    for an external backend) means ``cntk`` to our own loader too; any other
    name is returned as it is.

    Example:
        >>> canonical_backend('keras_backend.theano_backend'), canonical_backend('theano')
        ('theano', 'theano')
    """
    for row in TABLE:
        if name == row.adapter:
            return row.name
    return name


def install_advice(name, version, executable):
    """The install advice for backend ``name`` on an interpreter, as a sentence.

    Args:
        name: a backend name ('tensorflow', 'theano', 'cntk', 'jax').
        version: the interpreter's ``(major, minor)``.
        executable: the interpreter's path (named in the advice and its pip command).

    Returns:
        str: the advice of the first configuration of ``name`` that installs on that
        interpreter (its pip command), else what to use instead; '' for a name not in
        the table.

    Example:
        >>> print(install_advice('jax', (3, 10), '/usr/bin/python3'))  # doctest: +ELLIPSIS
        JAX needs Python 3.11+; this is Python 3.10 (/usr/bin/python3). Install it for ...
        >>> install_advice('jax', (3, 11), 'python3')
        'Install it for Python 3.11 (python3) with: python3 -m pip install "keras_backend[jax]"'
    """
    rows = configurations(name)
    if not rows:
        return ''
    here = 'Python %d.%d (%s)' % (version[0], version[1], executable)
    for row in rows:
        if row.runs_on(version):
            pip = '%s -m pip install "keras_backend[%s]"' % (executable, row.extra)
            return row.install.format(here=here, pip=pip)
    if len(rows) == 1 and rows[0].elsewhere:
        row = rows[0]
        lowest = '%d.%d' % row.python[0] if row.python[0] else ''
        return row.elsewhere.format(here=here, python=row.python_text(), lowest=lowest,
                                    extra=row.extra)
    return ('neither %s installs on %s; use an interpreter in one of those ranges'
            % (' nor '.join('%s (%s)' % (row.release, row.python_text()) for row in rows),
               here))


def engine_install_advice(engine):
    """The command that installs ``engine`` for the running interpreter, as a sentence.

    ``engine`` is a backend name ('tensorflow', 'theano', 'cntk' or 'jax'). The
    advice names this interpreter (``sys.executable`` and its version) and gives
    a command that works on it, or says which interpreter the engine needs
    instead (:func:`install_advice`); '' for a name not in the table.

    Example:
        >>> engine_install_advice('cntk')   # on Python 3.11   # doctest: +SKIP
        'CNTK 2.7 has wheels only for CPython 3.5 and 3.6; this is Python 3.11 ...'
    """
    return install_advice(engine, sys.version_info[:2], sys.executable or 'python')


def engine_import_error(engine, package, extra, error, hint=''):
    """Build the ImportError an adapter raises when its engine cannot be imported.

    The message names the engine, the package, the underlying import error
    and :func:`engine_install_advice` for the running interpreter (``engine``
    is a title such as 'TensorFlow' or a backend name; ``extra`` the pip extra
    that installs it, used when the table has no advice; ``hint`` an optional
    engine note), e.g.
    ``engine_import_error('TensorFlow', 'tensorflow', 'tensorflow-cpu', err)``.

    Returns:
        ImportError: for the adapter to raise.
    """
    key = engine
    for row in TABLE:
        if engine in (row.title, row.name):
            key = row.name
            break
    advice = engine_install_advice(key) or ('Install it with: pip install "keras_backend[%s]"'
                                            % extra)
    msg = ('The %s backend needs the %r package, which could not be imported (%s: %s). %s'
           % (engine, package, type(error).__name__, error, advice))
    if hint:
        msg += '. ' + hint
    return ImportError(msg)
