"""Keras 2's TensorBoard callback on every engine and release (``keras_backend.tensorboard``).

For each Keras release (2.3.1, 2.2.4, 2.1.6, 2.0.8) and engine, ``tests/keras2_tensorboard_
client.py`` trains a small model with ``keras.callbacks.TensorBoard`` in its own process and
records, beside it, what each summary must hold; these tests read the event files back with
TensorBoard's own reader (``tensorboard.backend.event_processing``) and through a real
``tensorboard`` server's HTTP data API, and compare: scalars with Keras' ``History`` and the
batches' logs (float32 rounding), histograms of weights, layer outputs and gradients, kernel
images, projector embeddings and their metadata, and the graph. Without Keras, the release,
tensorboardX or tensorboard the tests are skipped with that reason, never mocked.
"""
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from conftest import load_adapter, requested_backends
from test_keras2_client import DEFAULT_KERAS2_PATH, NO_KERAS2, cached_report
from test_keras2_releases import release_env, release_path

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

RELEASES = ('2.3.1', '2.2.4', '2.1.6', '2.0.8')
EPOCHS, BATCH, ROWS = 3, 10, 60      # as in the client

_REPORTS = {}


def _event_reader():
    try:
        from tensorboard.backend.event_processing import event_accumulator
    except ImportError as e:
        pytest.skip('tensorboard (the reader of event files) is not installed: %s' % e)
    return event_accumulator


def _keras_path(release):
    if release == '2.3.1':
        return os.environ.get('KERAS_BACKEND_KERAS2_PATH') or DEFAULT_KERAS2_PATH
    return release_path(release)


def report(release, engine):
    """(the client's JSON, its log folder) for ``release`` on ``engine``, one run each."""
    return cached_report(_REPORTS, (release, engine), lambda: _run(release, engine))


def _run(release, engine):
    module, reason = load_adapter(engine)
    if module is None:
        return 'skip', '%s backend not importable here: %s' % (engine, reason)
    try:
        import tensorboard  # noqa: F401
        import tensorboardX  # noqa: F401
    except ImportError as e:
        return 'skip', ("tensorboard or tensorboardX is not installed (pip install "
                        "'keras_backend[tensorboard]'): %s" % e)
    path = _keras_path(release)
    if release != '2.3.1' and not os.path.isdir(os.path.join(path, 'keras')):
        return 'skip', ('Keras %s is not installed in %s (pip install --no-deps --target %s '
                        'keras==%s; see README)' % (release, path, path, release))
    home = tempfile.mkdtemp()
    root = os.path.join(home, 'logs')
    os.makedirs(root)
    env = release_env(path, engine, home)
    proc = subprocess.run([sys.executable, os.path.join(HERE, 'keras2_tensorboard_client.py'),
                           root], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          universal_newlines=True, cwd=home)
    if proc.returncode != 0 and "No module named 'keras'" in proc.stderr:
        return 'skip', NO_KERAS2
    if proc.returncode != 0:
        return 'fail', 'Keras %s on %s exited %d:\n%s' % (release, engine, proc.returncode,
                                                         proc.stderr[-6000:])
    value = json.loads(proc.stdout.strip().splitlines()[-1])
    assert value['keras'] == release and value['backend'] == engine, value
    return 'ok', (value, root)


def _accumulator(folder):
    ea = _event_reader()
    acc = ea.EventAccumulator(folder, size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0,
                                                     ea.IMAGES: 0, ea.TENSORS: 0})
    acc.Reload()
    return acc


def _f32(values):
    return np.asarray(values, dtype=np.float32).astype(np.float64)


CASES = [(r, e) for r in RELEASES for e in requested_backends()]


@pytest.fixture(scope='module', autouse=True)
def _cleanup():
    yield
    for status, value in _REPORTS.values():
        if status == 'ok':
            shutil.rmtree(os.path.dirname(value[1]), ignore_errors=True)


@pytest.mark.parametrize('release,engine', CASES)
def test_keras_callback_is_ours(release, engine):
    value, _ = report(release, engine)
    for run in value['runs'].values():
        assert run['callback_class'] == 'keras_backend.tensorboard.keras2.TensorBoard'


@pytest.mark.parametrize('release,engine', CASES)
def test_epoch_scalars_equal_history(release, engine):
    """update_freq='epoch': every History key (losses, metrics, val_ ones) a scalar at steps
    0, 1, 2 with the History's values; the learning rate beside them."""
    value, root = report(release, engine)
    run = value['runs']['epoch']
    acc = _accumulator(os.path.join(root, 'epoch'))
    tags = set(acc.Tags()['scalars'])
    assert set(run['history']) | {'lr'} == tags
    for tag, expected in run['history'].items():
        events = acc.Scalars(tag)
        assert [e.step for e in events] == list(range(EPOCHS)), tag
        np.testing.assert_array_equal(_f32([e.value for e in events]), _f32(expected))
    np.testing.assert_array_equal(_f32([e.value for e in acc.Scalars('lr')]),
                                  _f32([note['lr'] for note in run['epochs']]))


def _expected_batch_events(run, every):
    """(step, loss) of the 'loss' events of a run with ``update_freq=every`` samples: the
    batch logs' loss where ``every`` samples have passed since the last write, then, at each
    epoch's end, the epoch's loss at the samples seen."""
    expected, seen, last = [], 0, 0
    batches = iter(run['batches'])
    per_epoch = ROWS // BATCH
    for epoch in range(EPOCHS):
        for _ in range(per_epoch):
            logs = next(batches)
            seen += int(logs['size'])
            if seen - last >= every:
                expected.append((seen, logs['loss']))
                last = seen
        expected.append((seen, run['history']['loss'][epoch]))
    return expected


@pytest.mark.parametrize('every', [('batch', 1), ('samples', 25)], ids=['batch', 'samples'])
@pytest.mark.parametrize('release,engine', CASES)
def test_batch_scalars_on_the_samples_axis(release, engine, every):
    """update_freq='batch' and 25 (samples): the batches' losses at the samples seen, and
    each epoch's at its end (Keras' TensorFlow callback wrote both so)."""
    name, n = every
    value, root = report(release, engine)
    run = value['runs'][name]
    acc = _accumulator(os.path.join(root, name))
    events = [(e.step, e.value) for e in acc.Scalars('loss')]
    expected = _expected_batch_events(run, n)
    assert [s for s, _ in events] == [s for s, _ in expected]
    np.testing.assert_array_equal(_f32([v for _, v in events]), _f32([v for _, v in expected]))
    val_steps = [e.step for e in acc.Scalars('val_loss')]
    assert val_steps == [ROWS * (k + 1) for k in range(EPOCHS)]


def _histogram_stats(acc, tag):
    return [(e.step, e.histogram_value) for e in acc.Histograms(tag)]


@pytest.mark.parametrize('release,engine', CASES)
def test_histograms_of_weights_outputs_and_gradients(release, engine):
    """histogram_freq=1: each weight (its values after the epoch), each layer's output over
    the 25 validation rows (batches of 10, 10, 5) and the validation loss's gradient (the
    size-weighted mean over those batches, against the gradient over all 25 rows at once)."""
    value, root = report(release, engine)
    run = value['runs']['epoch']
    acc = _accumulator(os.path.join(root, 'epoch'))
    tags = set(acc.Tags()['histograms'])
    first = run['epochs'][0]
    assert set(first['weights']) | set(first['outputs']) | set(first['grads']) == tags
    for epoch, note in enumerate(run['epochs']):
        for name, w in note['weights'].items():
            h = dict(_histogram_stats(acc, name))[epoch]
            w = np.asarray(w, dtype=np.float64)
            assert h.num == w.size, name
            np.testing.assert_allclose([h.min, h.max, h.sum], [w.min(), w.max(), w.sum()],
                                       rtol=1e-6, atol=1e-6, err_msg=name)
        for name, (lo, hi, total, size) in note['outputs'].items():
            h = dict(_histogram_stats(acc, name))[epoch]
            assert h.num == size, name
            np.testing.assert_allclose([h.min, h.max, h.sum], [lo, hi, total],
                                       rtol=1e-5, atol=1e-5, err_msg=name)
        for name, (lo, hi, total) in note['grads'].items():
            h = dict(_histogram_stats(acc, name))[epoch]
            np.testing.assert_allclose([h.min, h.max, h.sum], [lo, hi, total],
                                       rtol=1e-4, atol=1e-6, err_msg=name)


@pytest.mark.parametrize('release,engine', CASES)
def test_kernel_images(release, engine):
    """write_images: the dense kernel (20, 6) as one image of 6 x 20 (the long side across),
    its pixels TensorFlow's scaling of the weights after the epoch; a bias as 1 x n."""
    from PIL import Image
    from keras_backend.tensorboard.writer import image_to_uint8
    value, root = report(release, engine)
    run = value['runs']['epoch']
    acc = _accumulator(os.path.join(root, 'epoch'))
    names = [n for n in run['epochs'][0]['weights'] if n.startswith('hidden/')]
    kernel = [n for n in names if 'kernel' in n][0]
    bias = [n for n in names if 'bias' in n][0]
    for epoch, note in enumerate(run['epochs']):
        for name, transpose in ((kernel, True), (bias, False)):
            image = [e for e in acc.Images(name + '/image') if e.step == epoch][0]
            w = np.asarray(note['weights'][name], dtype=np.float32)
            w = w.T if transpose else w[None, :]
            assert (image.height, image.width) == w.shape
            pixels = np.asarray(Image.open(io.BytesIO(image.encoded_image_string)))
            pixels = pixels.reshape(w.shape + (-1,))[:, :, 0].astype(int)
            assert np.abs(pixels - image_to_uint8(w).astype(int)).max() <= 1, name


@pytest.mark.parametrize('release,engine', CASES)
def test_projector_embeddings_and_metadata(release, engine):
    """embeddings_freq=1: projector_config.pbtxt names each layer's tensor per epoch (Keras
    2.2+: the layer outputs for embeddings_data; 2.0/2.1: the Embedding matrix and the
    Dense kernel), equal to the recorder's; the metadata file's labels beside them."""
    from google.protobuf import text_format
    from tensorboard.plugins.projector import projector_config_pb2
    value, root = report(release, engine)
    run = value['runs']['epoch']
    folder = os.path.join(root, 'epoch')
    with open(os.path.join(folder, 'projector_config.pbtxt')) as f:
        config = text_format.Parse(f.read(), projector_config_pb2.ProjectorConfig())
    by_name = dict((e.tensor_name, e) for e in config.embeddings)
    with open(os.path.join(root, 'labels.tsv')) as f:
        labels = [line.rstrip('\n').split('\t') for line in f][1:]
    for epoch, note in enumerate(run['epochs']):
        for layer, matrix in note['embeddings'].items():
            entry = by_name['%s:%s' % (layer, str(epoch).zfill(5))]
            got = np.loadtxt(os.path.join(folder, entry.tensor_path), delimiter='\t', ndmin=2)
            np.testing.assert_allclose(got, np.asarray(matrix), rtol=1e-5, atol=1e-6)
            if layer == 'embedding':
                with open(os.path.join(folder, entry.metadata_path)) as f:
                    rows = [line.rstrip('\n').split('\t') for line in f][1:]
                assert rows == labels
            else:
                assert not entry.metadata_path


@pytest.mark.parametrize('release,engine', CASES)
def test_graph(release, engine):
    """write_graph: TensorFlow's graph of the model on TensorFlow (its layers' ops under their
    name scopes); Keras' layer graph elsewhere (a node per layer: its class, its inputs)."""
    value, root = report(release, engine)
    graph = _accumulator(os.path.join(root, 'epoch')).Graph()
    nodes = dict((n.name, n) for n in graph.node)
    if engine == 'tensorflow':
        assert len(nodes) > len(value['layers'])
        for name in ('hidden', 'out', 'embedding'):
            assert any(n.startswith(name + '/') for n in nodes), name
        return
    assert set(nodes) == set(name for name, _, _ in value['layers'])
    for name, cls, sources in value['layers']:
        assert nodes[name].op == cls
        assert sorted(i.split(':')[0] for i in nodes[name].input) == sources


def _free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _get_json(url):
    from urllib.request import urlopen
    with urlopen(url, timeout=10) as r:
        return json.loads(r.read().decode('utf-8'))


@pytest.mark.parametrize('release,engine', [c for c in CASES if c[0] == '2.3.1'])
def test_a_tensorboard_server_reads_the_scalars(release, engine):
    """``tensorboard --logdir`` (the tensorboard package's server, on a free loopback port)
    serves the run's scalars through its HTTP data API equal to Keras' History."""
    try:
        import tensorboard  # noqa: F401
    except ImportError as e:
        pytest.skip('tensorboard is not installed: %s' % e)
    value, root = report(release, engine)
    run = value['runs']['epoch']
    port = _free_port()
    server = subprocess.Popen([sys.executable, '-m', 'tensorboard.main', '--logdir',
                               os.path.join(root, 'epoch'), '--host', '127.0.0.1',
                               '--port', str(port), '--reload_interval', '1'],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = 'http://127.0.0.1:%d' % port
    try:
        deadline, runs, last = time.time() + 120, None, None
        while time.time() < deadline:
            if server.poll() is not None:
                pytest.fail('tensorboard exited %s:\n%s' % (
                    server.returncode, server.stdout.read().decode('utf-8', 'replace')[-3000:]))
            try:
                runs = _get_json(base + '/data/runs')
                if runs:
                    tags = _get_json(base + '/data/plugin/scalars/tags')
                    if set(run['history']) <= set(tags.get(runs[0], {})):
                        break
            except OSError as e:
                last = e
            time.sleep(1)
        else:
            pytest.fail('tensorboard served no scalars within 120 s (%r, %r)' % (runs, last))
        for tag, expected in run['history'].items():
            rows = _get_json('%s/data/plugin/scalars/scalars?run=%s&tag=%s'
                             % (base, runs[0], tag))
            assert [int(r[1]) for r in rows] == list(range(EPOCHS))
            np.testing.assert_array_equal(_f32([r[2] for r in rows]), _f32(expected))
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
