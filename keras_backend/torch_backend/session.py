"""Session and learning phase on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.session`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks). Their logic is the same on every engine
with no graph of its own (:mod:`keras_backend.eager_graph.sections`); here, their PyTorch
notes.
"""
from ..eager_graph import sections
from . import core

clear_session = sections.clear_session(core, doc="""\
Resets uids and the fixed learning phase and drops the functions ``eval`` kept.""")

get_session = sections.get_session(core, doc="""\
PyTorch has no session: a stand-in whose ``run(fetches, feed_dict=None)`` evaluates
    tensors through ``function``.""")

set_session = sections.set_session(core, doc="""\
Replaces the stand-in session; any object with a ``run(fetches, feed_dict)``.""")

learning_phase = sections.learning_phase(core, doc="""\
The symbolic phase is an int32 scalar placeholder named ``keras_learning_phase``
    (0 when not fed); a ``switch`` on it computes only the branch the phase picks.""")

name_scope = sections.name_scope(doc="""\
Names the variables and placeholders made inside (``scope/name``); PyTorch has no
    graph names of its own.""")
