"""The collectives interface: what each engine's ``collectives`` module provides.

:mod:`keras_backend.distribute` drives every engine through the module named in the
``collectives`` column of the engine table (:data:`keras_backend.engines.TABLE`), which
lives in the engine's own package (``keras_backend.<engine>_backend.collectives``). That
module defines the functions of :data:`REQUIRED` (and may define those of
:data:`OPTIONAL`), with these parameters and contracts. ``state`` is
``keras_backend.distribute``'s state (``rank``, ``size``, ``timeout``, ``engine``); ``K``
the engine's adapter.

``tests/test_interfaces.py`` checks every module of the table against this list, reading
its source (so that engines not installed here are checked too).
"""

#: (name, parameters, contract) of the functions every collectives module defines
REQUIRED = (
    ('paths', (),
     'the collective paths it offers (a tuple of ``\'engine\'``: the engine\'s own '
     'collectives, and ``\'mpi\'``: MPI through :mod:`keras_backend.distribute.mpi`), the '
     'one to take when both can run first.'),
    ('start', ('rank', 'size', 'timeout', 'path'),
     'join the group of ``size`` workers as ``rank`` over ``path`` (one of ``paths()``), '
     'starting that collective runtime; give up after ``timeout`` seconds. Returns None, or '
     '``(rank, size)`` where the runtime assigns them (MPI).'),
    ('allreduce_tensor', ('K', 'x', 'average', 'state'),
     'a node of ``K``\'s graph: the sum over the workers of the tensor ``x`` (divided by '
     'their number when ``average``), whose gradient is the same allreduce of the incoming '
     'gradient.'),
    ('allreduce_array', ('flat', 'average', 'state'),
     'the sum (or mean) over the workers of the 1-D numpy array ``flat``, now, as a numpy '
     'array of its dtype.'),
    ('barrier', ('state',),
     'return once every worker has called it.'),
    ('lost_reason', ('error',),
     'why the engine\'s exception ``error`` means a lost or hung peer (a short text), or '
     'None when it does not.'),
)

#: (name, parameters, contract) of the functions a collectives module may define
OPTIONAL = (
    ('float16_on_wire', (),
     'whether a float16 tensor travels as float16 (``Compression.fp16`` then halves the bytes '
     'of the collective). False: the engine\'s collective sums float16 in a wider type, so '
     '``Compression.fp16`` leaves tensors as they are there (absent: True).'),
    ('stop', (),
     'leave the group and stop the runtime, so that ``init`` may run again (absent: nothing '
     'to stop, e.g. MPI, which finalises at exit).'),
)


def problems(functions):
    """What a collectives module lacks: ``functions`` maps each function it defines to its
    parameter names; returns a list of texts (empty when the module fits)."""
    found = []
    for name, params, _ in REQUIRED:
        if name not in functions:
            found.append('%s is missing' % name)
        elif tuple(functions[name]) != params:
            found.append('%s%s should take %s' % (name, tuple(functions[name]), params))
    for name, params, _ in OPTIONAL:
        if name in functions and tuple(functions[name]) != params:
            found.append('%s%s should take %s' % (name, tuple(functions[name]), params))
    return found
