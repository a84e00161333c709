"""Kernels executed per Keras training step on TensorFlow, ours against ``tf_keras``.

For each model of ``keras2_benchmark.py`` and each side (Keras 2.3.1 on our
TensorFlow adapter, ``tf_keras`` in its default mode and in graph mode), a
fresh process builds the model, runs three warm-up ``train_on_batch`` calls
on a batch of 32 and records five more under TensorFlow's profiler. The
count is the number of op executions per step that the profiler's trace
shows (events named ``node:OpType`` on the executor threads; the executor's
own bookkeeping events are left out), with the op types that differ most
between the sides. This is the measure behind issue 20's "no more kernels
than tf_keras" (a count, not a time: it does not depend on the machine's load).

Usage::

    python benchmarks/tf_kernel_count.py [--models lstm,gru,bilstm] [--top 12]

``--models`` also takes ``keras2_benchmark.py``'s realistic models (``resnet``,
``lstm256``, ...), trained on one batch of their own size. Besides the counts it
prints the op types that kept the executor busiest (summed event durations).
"""
from __future__ import print_function

import argparse
import collections
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SIDES = ('ours', 'tf_keras_default', 'tf_keras_graph')
STEPS = 5


def count(side, name):
    """Op executions per ``train_on_batch`` step: (total, Counter by op type)."""
    sys.path.insert(0, HERE)
    import keras2_benchmark as kb
    _, layers, sequential, _, to_categorical, _ = kb._import_framework(side)
    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    if name in kb.REALISTIC:
        keras = __import__('tf_keras' if side.startswith('tf_keras') else 'keras')
        x, y, loss = kb.realistic_data(name, kb.REALISTIC[name][1])
        model = kb.build_realistic(name, keras, False)
        xb, yb = x, y
    else:
        x, y = kb.load_data()
        model = kb.build(name, layers, sequential, side.startswith('tf_keras'))
        xb = kb.prepare(name, x)[:kb.BATCH]
        yb = to_categorical(y, 10).astype('float32')[:kb.BATCH]
        loss = 'categorical_crossentropy'
    for layer, values in kb.initial_weights(model):
        layer.set_weights(values)
    model.compile(optimizer='adam', loss=loss)
    for _ in range(3):
        model.train_on_batch(xb, yb)
    logdir = tempfile.mkdtemp(prefix='tf_kernel_count_')
    try:
        tf.profiler.experimental.start(logdir)
        for _ in range(STEPS):
            model.train_on_batch(xb, yb)
        tf.profiler.experimental.stop()
        space = xplane_pb2.XSpace()
        path = glob.glob(os.path.join(logdir, '**', '*.xplane.pb'), recursive=True)[0]
        with open(path, 'rb') as f:
            space.ParseFromString(f.read())
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    ops, busy = collections.Counter(), collections.Counter()
    for plane in space.planes:
        for line in plane.lines:
            if line.name == 'python':
                continue
            for event in line.events:
                label = plane.event_metadata[event.metadata_id].name
                if '::' in label or ':' not in label:
                    continue   # the executor's own events (ExecutorState::Process, ...)
                ops[label.rsplit(':', 1)[1]] += 1
                busy[label.rsplit(':', 1)[1]] += event.duration_ps
    return {'count': dict((k, v / float(STEPS)) for k, v in ops.items()),
            'ms': dict((k, v / 1e9 / STEPS) for k, v in busy.items())}


def run_side(side, name):
    env = dict(os.environ)
    root = os.path.dirname(HERE)
    path = [root]
    if side == 'ours':
        sys.path.insert(0, HERE)
        import keras2_benchmark as kb
        path.insert(0, kb.keras2_path())
        env['KERAS_BACKEND'] = 'keras_backend.tensorflow_backend'
    else:
        env.pop('KERAS_BACKEND', None)
    env['PYTHONPATH'] = os.pathsep.join(path + [env.get('PYTHONPATH', '')])
    env.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
    env['KERAS_BACKEND_QUIET'] = '1'
    out = subprocess.check_output([sys.executable, __file__, '--worker', side, '--model', name],
                                  env=env, stderr=subprocess.DEVNULL)
    return json.loads(out.decode().strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--models', default='mlp,cnn,lstm,gru,bilstm')
    parser.add_argument('--top', type=int, default=10,
                        help='op types with the largest differences to show per model')
    parser.add_argument('--worker', help=argparse.SUPPRESS)
    parser.add_argument('--model', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(count(args.worker, args.model)))
        return
    print('| model | ' + ' | '.join(SIDES) + ' | ours / tf_keras default |')
    print('|---|' + '---|' * (len(SIDES) + 1))
    details, timed = [], []
    for name in args.models.split(','):
        found = dict((side, run_side(side, name)) for side in SIDES)
        counts = dict((side, found[side]['count']) for side in SIDES)
        ms = dict((side, found[side]['ms']) for side in SIDES)
        top = sorted(set(ms['ours']) | set(ms['tf_keras_default']),
                     key=lambda t: -max(ms['ours'].get(t, 0), ms['tf_keras_default'].get(t, 0)))
        timed.append('%s: ops busy %.1f / %.1f ms per step; ' % (
            name, sum(ms['ours'].values()), sum(ms['tf_keras_default'].values())) + ', '.join(
            '%s %.1f/%.1f' % (t, ms['ours'].get(t, 0), ms['tf_keras_default'].get(t, 0))
            for t in top[:args.top]))
        totals = dict((side, sum(c.values())) for side, c in counts.items())
        print('| %s | %s | %.2fx |' % (name, ' | '.join('%.0f' % totals[s] for s in SIDES),
                                        totals['ours'] / totals['tf_keras_default']))
        types = set(counts['ours']) | set(counts['tf_keras_default'])
        diff = sorted(types, key=lambda t: -abs(counts['ours'].get(t, 0)
                                                 - counts['tf_keras_default'].get(t, 0)))
        details.append('%s: ' % name + ', '.join(
            '%s %g/%g' % (t, counts['ours'].get(t, 0), counts['tf_keras_default'].get(t, 0))
            for t in diff[:args.top]))
    print('\nlargest differences per op type (ours / tf_keras default, per step):')
    for line in details:
        print('  ' + line)
    print('\nbusiest op types, summed op time in ms per step (ours / tf_keras default; ops on '
          'parallel threads overlap, so this is work, not wall time):')
    for line in timed:
        print('  ' + line)


if __name__ == '__main__':
    main()
