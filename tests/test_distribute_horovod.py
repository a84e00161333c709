"""keras_backend.distribute: Horovod's remaining collective API (``op``, ``Compression``,
``allgather``, ``broadcast``, ``join`` / ``joinable`` / ``JoinCallback``,
``DistributedOptimizer(backward_passes_per_step=...)``).

One launch per engine (``tests/distributed/horovod_api.py``, 2 workers, Keras 2.3.1)
checks every function against numpy; the one-process identity behaviour and bad input are
checked in this process.
"""
import os
import sys
import time

import numpy as np
import pytest

import keras_backend.distribute as kd
from test_distribute import (ENGINES, _engine_or_skip, _launch, _load_script,  # noqa: F401
                             _no_keras2, single, workdir)


# -- one process: every new function is the identity ------------------------------------

def test_one_process_identity_of_the_horovod_api(K, single):
    single.init(engine=K.backend())
    x = K.placeholder(shape=(2, 3))
    assert single.allreduce(x, op=kd.Sum) is x
    assert single.allreduce(x, op=kd.Average, compression=kd.Compression.fp16) is x
    assert single.allgather(x) is x
    assert single.broadcast(x, root_rank=0) is x
    np.testing.assert_array_equal(single.allreduce_values(np.arange(3.0), op=kd.Sum),
                                  np.arange(3.0))
    got = single.allgather_values(np.arange(4))
    np.testing.assert_array_equal(got, np.arange(4))
    assert got.dtype == np.arange(4).dtype
    step = single.joinable(lambda inputs: inputs[0] * 2)
    assert step([3]) == 6
    assert single.join() == 0


def test_compressors_cast_floats_only(K, single):
    single.init(engine=K.backend())
    v = K.variable(np.array([1.0 / 3, 2.0], 'float32'))
    c, ctx = kd.Compression.fp16.compress(v)
    assert ctx == 'float32'
    back = kd.Compression.fp16.decompress(c, ctx)
    assert K.dtype(back) == 'float32'
    np.testing.assert_allclose(K.eval(back), [1.0 / 3, 2.0], rtol=1e-3)
    if K.dtype(c) == 'float16':
        assert K.eval(back)[0] != np.float32(1.0 / 3)    # it went through float16
    else:   # CNTK's adapter computes float16 in float32: nothing is rounded
        assert K.dtype(c) == 'float32' and K.eval(back)[0] == np.float32(1.0 / 3)
    i = K.variable(np.arange(3), dtype='int32')
    if K.dtype(i) == 'int32':     # (CNTK holds integers as float32)
        assert kd.Compression.fp16.compress(i) == (i, None)
    assert kd.Compression.none.compress(v) == (v, None)
    assert kd.Compression.none.decompress(v, None) is v


def test_bad_arguments_of_the_horovod_api(single):
    single.init(engine='tensorflow')
    with pytest.raises(ValueError, match='average=False contradicts op'):
        single.allreduce_values(1.0, average=False, op=kd.Average)
    with pytest.raises(ValueError, match='average=True contradicts op'):
        single.allreduce([], average=True, op=kd.Sum)
    with pytest.raises(TypeError, match='op must be'):
        single.allreduce_values(1.0, op='sum')
    with pytest.raises(TypeError, match='average must be'):
        single.allreduce_values(1.0, average='yes')
    with pytest.raises(TypeError, match='compression must be'):
        single.allreduce([], compression='fp16')
    with pytest.raises(ValueError, match='at least one axis'):
        single.allgather_values(3.0)
    with pytest.raises(ValueError, match='numeric'):
        single.allgather_values(np.array(['a']))
    with pytest.raises(ValueError, match='root_rank'):
        single.broadcast(None, root_rank=1)
    with pytest.raises(TypeError, match='root_rank'):
        single.broadcast(None, root_rank=0.0)
    with pytest.raises(TypeError, match='step must be callable'):
        single.joinable(3)


def test_distributed_optimizer_bad_arguments(K, single, monkeypatch):
    single.init(engine=K.backend())
    from test_distribute import KERAS2_PATH
    if os.path.isdir(KERAS2_PATH) and KERAS2_PATH not in sys.path:
        monkeypatch.syspath_prepend(KERAS2_PATH)
    wanted = 'keras_backend.%s_backend' % K.backend()
    if 'keras' in sys.modules:
        if sys.modules['keras'].backend.backend() != K.backend():
            pytest.skip('Keras was imported for another engine in this process')
    else:
        monkeypatch.setenv('KERAS_BACKEND', wanted)
    from keras_backend import keras2_compat
    keras2_compat.install()
    try:
        import keras
        from keras_backend.distribute import keras2
    except ImportError as e:
        pytest.skip('Keras 2.3.1 is not importable here: %s' % e)
    sgd = keras.optimizers.SGD(0.1)
    with pytest.raises(ValueError, match='backward_passes_per_step'):
        keras2.DistributedOptimizer(sgd, backward_passes_per_step=0)
    with pytest.raises(TypeError, match='backward_passes_per_step'):
        keras2.DistributedOptimizer(sgd, backward_passes_per_step=2.0)
    with pytest.raises(TypeError, match='compression must be'):
        keras2.DistributedOptimizer(sgd, compression='fp16')
    with pytest.raises(TypeError, match='op must be'):
        keras2.DistributedOptimizer(sgd, op='sum')
    opt = keras2.DistributedOptimizer(sgd, backward_passes_per_step=3, op=kd.Sum)
    assert type(opt).__name__ == 'SGD' and opt._kb_passes == 3 and not opt._kb_average
    again = keras2.DistributedOptimizer(opt)      # re-wrapping takes the new arguments
    assert type(again) is type(opt) and again._kb_passes == 1 and again._kb_average


# -- two workers on each engine ----------------------------------------------------------

@pytest.mark.parametrize('engine', ENGINES)
def test_horovod_api_on_two_workers(engine, workdir):
    _engine_or_skip(engine)
    out = os.path.join(workdir, 'hvd')
    proc, took = _launch(engine, 2, 'horovod_api.py', [out], keras2=True, timeout=120,
                         limit=900)
    if _no_keras2(proc):
        pytest.skip('Keras 2.3.1 is not installed for %s (see README)' % sys.executable)
    assert proc.returncode == 0, proc.stderr[-5000:]
    script = _load_script('horovod_api')
    res = [np.load('%s.%d.npz' % (out, r)) for r in (0, 1)]
    x = np.array([1., 2., 3.])
    v = [script.fp_value(r).astype('float64') for r in (0, 1)]
    blocks = [10 * r + np.arange(6.0).reshape(2, 3) for r in (0, 1)]
    W = np.arange(12.0).reshape(4, 3)
    join_w, join_mae = script.join_reference()
    for r, got in enumerate(res):
        def check(key, expected, rtol=1e-5):
            np.testing.assert_allclose(got[key], expected, rtol=rtol, atol=1e-6,
                                       err_msg='rank %d: %s' % (r, key))
        check('sum', 3 * x)
        check('average', 1.5 * x)
        check('average_false', 3 * x)
        check('sum_list', np.concatenate([3 * x, np.full(4, 3.0)]))
        check('fp32', (v[0] + v[1]) / 2)
        check('fp16', (v[0] + v[1]) / 2, rtol=2e-3)
        assert str(got['fp16_dtype']) == 'float32'
        if got['half_held']:   # float16 moved: one-third is not representable in 11 bits
            assert not np.allclose(got['fp16'], got['fp32'], rtol=1e-5, atol=0)
        else:                  # the engine's collective does not move float16 (MPI, CNTK)
            check('fp16', got['fp32'])
        check('gather', np.concatenate(blocks))
        check('gather_grad', 2 * W[2 * r:2 * r + 2])           # summed over both workers
        check('bcast', [2.0, 4.0])                               # rank 1's (r + 1) * [1, 2]
        check('bcast_grad', [3.0, 9.0] if r == 1 else [0.0, 0.0])   # root: sum of c_r
        check('gather_values_f', [0.0, 1.0, 0.0, 2.0, 4.0])
        assert got['gather_values_i'].dtype == np.int64
        np.testing.assert_array_equal(got['gather_values_i'], [[0, 0], [1, 1], [1, 1]])
        check('bcast_values', [6.0])
        check('join_k', join_w)
        np.testing.assert_array_equal(got['join_k_last'], [1, 1])
        check('bpps_before', np.concatenate([script.W0.ravel(), [0.0]]))
        check('bpps_after', script.bpps_reference())
        np.testing.assert_array_equal(got['bpps_iterations'], [0, 1])
        check('fit_fp32', script.bpps_reference())
        check('fit_fp16', got['fit_fp32'], rtol=1e-3)
        check('join_fit', join_w)
        check('join_fit_mae', join_mae[r])
        assert int(got['join_fit_last']) == 1
    print('%s: %.1f s' % (engine, took))


@pytest.mark.parametrize('engine', ENGINES)
def test_join_after_plain_steps_fails_at_once(engine, workdir):
    """Horovod's form (plain K.function steps, then join): the worker that joins says at
    once that its steps must be joinable, and the job ends within seconds, not at the
    collective timeout (300 s here)."""
    _engine_or_skip(engine)
    out = os.path.join(workdir, 'plain')
    proc, took = _launch(engine, 2, 'plain_join.py', [out], timeout=300, limit=240)
    end = time.time()
    assert proc.returncode != 0
    assert 'join: this worker ran no step made by keras_backend.distribute.joinable' \
        in proc.stderr, proc.stderr[-5000:]
    with open(out + '.1.join') as f:
        joined = float(f.read())
    assert end - joined < 5.0, end - joined
    print('%s: join after plain steps: the job ended %.2f s after join()' % (engine, end - joined))
