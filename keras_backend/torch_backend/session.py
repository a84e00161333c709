"""Session and learning phase on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.session`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import contextlib

from .. import common
from .core import _EVAL_CACHE, _LEARNING_PHASE, _SESSION


def clear_session():
    """Resets uids and the fixed learning phase and drops the functions ``eval`` kept."""
    common._reset_session_state()
    _EVAL_CACHE.clear()


def get_session():
    """PyTorch has no session: a stand-in whose ``run(fetches, feed_dict=None)`` evaluates
    tensors through ``function``."""
    return _SESSION[0]


def set_session(session):
    """Replaces the stand-in session; any object with a ``run(fetches, feed_dict)``."""
    if not callable(getattr(session, 'run', None)):
        raise ValueError('set_session: expected an object with a run(fetches, feed_dict) '
                         'method, got %r' % (session,))
    _SESSION[0] = session


def learning_phase():
    """The symbolic phase is an int32 scalar placeholder named ``keras_learning_phase``
    (0 when not fed); a ``switch`` on it computes only the branch the phase picks."""
    fixed = common._fixed_learning_phase()
    if fixed is not None:
        return fixed
    return _LEARNING_PHASE


@contextlib.contextmanager
def name_scope(name):
    """Names the variables and placeholders made inside (``scope/name``); PyTorch has no
    graph names of its own."""
    with common._name_scope_stack(name):
        yield name
