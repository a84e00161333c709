"""Session and learning phase on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.session`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

import contextlib

from .. import common
from .core import _CONTROL_SCOPES, _engine, _EVAL_CACHE, _LEARNING_PHASE, _SESSION


def clear_session():
    """Also drops the functions that ``eval`` compiled and cached."""
    common._reset_session_state()
    _EVAL_CACHE.clear()
    del _CONTROL_SCOPES[:]
    _engine.forget_draws()


def get_session():
    """The engine has no session: a stand-in whose ``run(fetches, feed_dict=None)``
    evaluates tensors with ``eval`` / ``function``."""
    return _SESSION[0]


def set_session(session):
    """Replaces the stand-in session; any object with a ``run(fetches, feed_dict)``
    method."""
    if not callable(getattr(session, 'run', None)):
        raise ValueError('set_session: expected an object with a run(fetches, feed_dict) '
                         'method, got %r' % (session,))
    _SESSION[0] = session


def learning_phase():
    """The symbolic uint8 scalar input ``keras_learning_phase``; a ``function``
    that is not fed it sees 0."""
    return common._learning_phase_or(lambda: _LEARNING_PHASE)


@contextlib.contextmanager
def name_scope(name):
    """Prefixes the names of variables, constants and placeholders, as Keras'
    Theano backend does (Keras saves weights by these names)."""
    with common._name_scope_stack(name):
        yield name
