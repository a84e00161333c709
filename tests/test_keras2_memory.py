"""Keras 2.3.1's parallel masked BiLSTMs compile and train within 3 GB on every engine (issue 33).

The model of issue 33: ``Embedding(5, 3, mask_zero=True)`` feeding five
``Bidirectional(LSTM(16, return_sequences=True))`` in parallel, concatenated, then
``GlobalMaxPooling1D`` and ``Dense(1, sigmoid)``; ``compile('adam', 'binary_crossentropy')``
and one ``train_on_batch`` of 32 sequences of length 8 (some steps masked). On PyTensor
its train function took 9-24 GB to compile (the rewrites' copies of the variables'
creation stacks grew as 3**k, see docs/semantics.md); our other engines need under 1 GB.

Each engine runs the model in its own process (``tests/test_keras2_client.py``'s
``run_keras2``: Keras picks its backend once, at import), which bounds its own memory
before importing anything:

* Theano / PyTensor and CNTK: an address-space limit (``RLIMIT_AS``) of 3 GB, so that a
  blow-up fails fast inside the process (a ``MemoryError``) instead of taking the machine;
  importing each engine and Keras fits well under it (checked: about 1 GB of address
  space).
* TensorFlow and JAX: no address-space limit; their runtimes reserve address space far
  beyond what they touch (thread stacks, allocator arenas, XLA), so ``RLIMIT_AS`` would
  measure reservations, not use. The bound is on the resident peak instead, read after
  the fact from the process's ``ru_maxrss``.

On every engine the process must exit cleanly with a finite loss, its ``ru_maxrss`` must
stay under 3 GB, and its stderr must not mention a ``MemoryError``: the engines' rewriters
log a failed rewrite and go on (PyTensor's and Theano's ``on_opt_error=warn``), so a
swallowed one would otherwise pass unseen. The Theano engines compile in their
compiledir (CI shares it): warm, the five heads' train function compiles in about 17 s on
PyTensor and 40 s on Theano 1.0.5 (a cold Theano 1.0.5 compiledir: about 5 minutes).
"""
import json
import os

import pytest

from conftest import load_adapter, requested_backends
from test_keras2_client import NO_KERAS2, run_keras2

LIMIT = 3 * 1024 ** 3
HEADS = 5

#: engines whose process runs under RLIMIT_AS (the others: resident peak, after the fact)
ADDRESS_SPACE_LIMITED = ('theano', 'cntk')

_WORKER = r'''
import json, resource, sys
limit, mechanism, heads = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
if mechanism == 'address_space':
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import numpy as np
import keras_backend.keras2_compat
keras_backend.keras2_compat.install()   # Keras 2.3.1 on Python 3.10+ (no-op on 3.6)
import keras
from keras import layers as L
inp = L.Input((None,))
e = L.Embedding(5, 3, mask_zero=True)(inp)
h = L.Concatenate()([L.Bidirectional(L.LSTM(16, return_sequences=True))(e)
                     for _ in range(heads)])
# the identity Lambda as in the issue's model (it drops the mask before the pooling)
m = keras.models.Model(inp, L.Dense(1, activation='sigmoid')(
    L.GlobalMaxPooling1D()(L.Lambda(lambda t: t)(h))))
m.compile('adam', 'binary_crossentropy')
rs = np.random.RandomState(0)
x = rs.randint(0, 4, (32, 8))   # token 0 is masked
loss = m.train_on_batch(x, rs.randint(0, 2, 32))
print(json.dumps({'keras': keras.__version__, 'backend': keras.backend.backend(),
                  'loss': float(np.asarray(loss)),
                  'maxrss_bytes': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
'''


@pytest.mark.parametrize('engine', requested_backends())
def test_parallel_masked_bilstms_train_within_3gb(engine):
    module, reason = load_adapter(engine)
    if module is None:
        pytest.skip('%s backend not importable here: %s' % (engine, reason))
    mechanism = 'address_space' if engine in ADDRESS_SPACE_LIMITED else 'resident_peak'
    proc = run_keras2(engine, ['-c', _WORKER, str(LIMIT), mechanism, str(HEADS)])
    if proc.returncode != 0 and "No module named 'keras'" in proc.stderr:
        pytest.skip(NO_KERAS2)
    assert proc.returncode == 0, 'the model failed (exit %d, %s limit of %d bytes):\n%s' % (
        proc.returncode, mechanism, LIMIT, proc.stderr[-6000:])
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    if report['keras'] != '2.3.1':
        pytest.skip('found Keras %s, this test needs 2.3.1' % report['keras'])
    assert report['backend'] == engine      # Keras answers the engine's name
    assert report['loss'] == report['loss'] and 0 < report['loss'] < 10, report
    assert 'MemoryError' not in proc.stderr, \
        'a MemoryError was raised and swallowed on the way:\n' + proc.stderr[-6000:]
    print('%s: ru_maxrss %.2f GiB (%s), loss %.4f'
          % (engine, report['maxrss_bytes'] / 1024. ** 3, mechanism, report['loss']))
    assert report['maxrss_bytes'] < LIMIT, report
