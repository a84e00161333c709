"""Session and learning phase on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.session`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import contextlib

from .. import common
from .core import tf, _graph, _reset_state, _Session, _State


def clear_session():
    """Replaces the adapter's one symbolic graph (a ``FuncGraph``): placeholders and
    compiled functions made before become unusable; variables are eager and keep working."""
    common._reset_session_state()
    _reset_state()


def get_session():
    """TensorFlow 2 has no default session: returns the one given to ``set_session``,
    else a session-like object whose ``run(fetches, feed_dict=None)`` evaluates tensors of
    the adapter's graph."""
    if _State.session is None:
        _State.session = _Session()
    return _State.session


def set_session(session):
    """Takes a ``tf.compat.v1.Session`` or any object with a ``run(fetches,
    feed_dict=None)`` method; variables here are eager, so a graph-mode
    ``tf.compat.v1.Session`` cannot read them."""
    if not callable(getattr(session, 'run', None)):
        raise ValueError('session: expected an object with a run() method (such as '
                         'tf.compat.v1.Session), got %r' % (session,))
    _State.session = session


def learning_phase():
    """The symbolic phase is a bool ``tf.compat.v1.placeholder_with_default``
    (default False: test) named ``keras_learning_phase``, the same tensor until
    ``clear_session()``."""
    fixed = common._fixed_learning_phase()
    if fixed is not None:
        return fixed
    if _State.learning_phase_tensor is None:
        g = _graph()
        # Top-level name whatever name scope asks for it first.
        with g.as_default(), g.name_scope(None), tf.control_dependencies(None):
            _State.learning_phase_tensor = tf.compat.v1.placeholder_with_default(
                False, shape=(), name='keras_learning_phase')
    return _State.learning_phase_tensor


@contextlib.contextmanager
def name_scope(name):
    """``tf.name_scope``; entered from eager code it also makes the adapter's symbolic graph
    the default graph for its body, so that TensorFlow ops called directly on symbolic
    tensors there (``tf.nn.relu(x)`` in a Keras layer's ``call``, which Keras 2.3.1 runs
    inside ``K.name_scope(layer.name)``; its TensorFlow-only branches such as
    ``tf.scalar_mul`` in ``clipnorm``) are built in that graph, as in Keras 2's graph mode."""
    if not isinstance(name, str):
        raise ValueError('name: expected a str, got %r' % (name,))
    if tf.executing_eagerly():
        # The scope given back is the symbolic graph's, made unique there as graph
        # mode did ('loss', then 'loss_1'): Keras names ops with it
        # (``K.size(x, name=scope)``), and an exact name may be used once per graph.
        graph = _graph()
        with tf.name_scope(name), graph.as_default(), graph.name_scope(name) as scope:
            yield scope
    else:
        with tf.name_scope(name) as scope:
            yield scope
