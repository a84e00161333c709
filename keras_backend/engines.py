"""The engines keras_backend knows: their names, and what to do when one is missing.

:func:`canonical_backend` maps ``keras_backend.<engine>_backend`` (the form
Keras 2.3.1 takes for an external backend) to the engine name; the adapters
raise :func:`engine_import_error` when their engine cannot be imported, with
the install command that works for the running interpreter.
"""
import sys

#: the engine names, and the import paths of our own adapters that mean them
BUILTIN_BACKEND_NAMES = ('tensorflow', 'theano', 'cntk', 'jax')


def canonical_backend(name):
    """Map the import path of one of our adapters to its engine name.

    ``KERAS_BACKEND=keras_backend.cntk_backend`` (the form Keras 2.3.1 takes
    for an external backend) means ``cntk`` to our own loader too; any other
    name is returned as it is.

    Example:
        >>> canonical_backend('keras_backend.theano_backend'), canonical_backend('theano')
        ('theano', 'theano')
    """
    for engine in BUILTIN_BACKEND_NAMES:
        if name == 'keras_backend.%s_backend' % engine:
            return engine
    return name




def engine_install_advice(engine):
    """The command that installs ``engine`` for the running interpreter, as a sentence.

    ``engine`` is 'tensorflow', 'theano' or 'cntk'. The advice names this
    interpreter (``sys.executable`` and its version) and gives a command that
    works on it, or says which interpreter the engine needs instead.

    Example:
        >>> engine_install_advice('cntk')   # on Python 3.11   # doctest: +SKIP
        'CNTK 2.7 has wheels only for CPython 3.5 and 3.6; this is Python 3.11 ...'
    """
    exe = sys.executable or 'python'
    here = 'Python %d.%d (%s)' % (sys.version_info[0], sys.version_info[1], exe)
    py = sys.version_info[:2]
    pip = '%s -m pip install "keras_backend[%%s]"' % exe
    if engine == 'tensorflow':
        if (3, 9) <= py:
            return 'Install it for %s with: %s' % (here, pip % 'tensorflow-cpu')
        return ('TensorFlow 2 has no wheels for %s; use a Python 3.9+ interpreter '
                '(TensorFlow\'s own range) and install it there with: python3 -m pip '
                'install "keras_backend[tensorflow-cpu]"' % here)
    if engine == 'theano':
        if py >= (3, 10):
            return 'Install PyTensor (Theano\'s successor) for %s with: %s' % (here, pip % 'theano')
        if py < (3, 8):
            return 'Install Theano 1.0.5 for %s with: %s' % (here, pip % 'theano')
        return ('neither PyTensor (Python 3.10+) nor Theano 1.0.5 (Python < 3.8) installs on '
                '%s; use an interpreter in one of those ranges' % here)
    if engine == 'cntk':
        if py in ((3, 5), (3, 6)):
            return ('Install it for %s with: %s (CNTK also needs OpenMPI; '
                    'tools/setup_cntk_env.sh does both)' % (here, pip % 'cntk'))
        return ('CNTK 2.7 has wheels only for CPython 3.5 and 3.6; this is %s. Build its '
                'environment with: tools/setup_cntk_env.sh .venv36   (from a CPython 3.6, '
                'e.g. pyenv\'s), then run your program with .venv36/bin/python' % here)
    return ''


def engine_import_error(engine, package, extra, error, hint=''):
    """Build the ImportError an adapter raises when its engine cannot be imported.

    The message names the engine, the package, the underlying import error
    and :func:`engine_install_advice` for the running interpreter (``extra``
    is the pip extra that installs it; ``hint`` an optional engine note), e.g.
    ``engine_import_error('TensorFlow', 'tensorflow', 'tensorflow-cpu', err)``.
    """
    key = {'TensorFlow': 'tensorflow', 'Theano': 'theano', 'CNTK': 'cntk'}.get(engine, engine)
    advice = engine_install_advice(key) or ('Install it with: pip install "keras_backend[%s]"'
                                            % extra)
    msg = ('The %s backend needs the %r package, which could not be imported (%s: %s). %s'
           % (engine, package, type(error).__name__, error, advice))
    if hint:
        msg += '. ' + hint
    return ImportError(msg)
