"""Variable updates on JAX: the engine-level functions of the names of
:mod:`keras_backend.api.updates`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks). Their logic is the same on every engine
with no graph of its own (:mod:`keras_backend.eager_graph.sections`): pending updates
(``core._make_update``).
"""
from ..eager_graph import sections
from . import core

update = sections.update(core)

update_add = sections.update_add(core)

update_sub = sections.update_sub(core)

moving_average_update = sections.moving_average_update(core)
