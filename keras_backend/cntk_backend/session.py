"""Session and learning phase on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.session`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import contextlib

from .. import common
from .core import _new_learning_phase, _SHAPE_SOURCES, _State, _TRANSPOSED, _UNBATCHED


def clear_session():
    """CNTK keeps no global graph: only the uids, the learning phase (a fresh placeholder) and the
    adapter's cached graph state are reset."""
    common._reset_session_state()
    _SHAPE_SOURCES.clear()
    _UNBATCHED.clear()
    _TRANSPOSED.clear()
    _State.learning_phase = _new_learning_phase()


def get_session():
    """CNTK has no sessions: a session-like object whose ``run(fetches, feed_dict=None)`` evaluates
    tensors."""
    return _State.session


def set_session(session):
    """CNTK has no sessions: ``session`` is any object with a ``run(fetches, feed_dict)`` method
    (ValueError otherwise)."""
    if not hasattr(session, 'run'):
        raise ValueError('set_session: expected an object with a run method, got %r'
                         % (session,))
    _State.session = session


def learning_phase():
    """A scalar float32 CNTK input (``C.input_variable``) fed 0 or 1; the Python int 0/1 after
    ``set_learning_phase``. A ``function`` whose graph uses it without listing it as an input feeds
    0."""
    return common._learning_phase_or(lambda: _State.learning_phase)


@contextlib.contextmanager
def name_scope(name):
    """CNTK has no name scopes: as in Keras 2.3.1's CNTK backend, the open scopes (joined with
    ``_``) prefix the names given to ``variable`` and ``constant`` (``'<scopes>/<name>'``), so
    nested layers get distinct weight names."""
    with common._name_scope_stack(name):
        yield name
