"""Session and learning phase on JAX: the engine-level functions of the names of
:mod:`keras_backend.api.session`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks). Their logic is the same on every engine
with no graph of its own (:mod:`keras_backend.eager_graph.sections`); here, their JAX notes.
"""
from ..eager_graph import sections
from . import core
from .core import jax

clear_session = sections.clear_session(core, also=jax.clear_caches, doc="""\
Resets uids and the fixed learning phase, drops the cached ``eval`` programs and
    JAX's compiled programs (``jax.clear_caches``): a process that builds many models
    would otherwise keep every executable mapped (XLA's CPU code can exhaust the
    kernel's memory-map limit).""")

get_session = sections.get_session(core, doc="""\
JAX has no session: a stand-in whose ``run(fetches, feed_dict=None)`` evaluates
    tensors through ``function``.""")

set_session = sections.set_session(core, doc="""\
Replaces the stand-in session; any object with a ``run(fetches, feed_dict)``.""")

learning_phase = sections.learning_phase(core, doc="""\
The symbolic phase is an int32 scalar placeholder named ``keras_learning_phase``
    (0 when not fed); a ``function`` that is fed it compiles one program per phase.""")

name_scope = sections.name_scope(doc="""\
Names the variables and placeholders made inside (``scope/name``); JAX has no
    graph names of its own.""")
