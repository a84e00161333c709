"""Keras 2's ``TensorBoard`` callback on every engine of keras_backend.

:func:`tensorboard_class` makes the class that ``keras2_compat`` puts in place of Keras'
own ``keras.callbacks.TensorBoard`` (every release, 2.0 to 2.3.1): Keras' arguments and
their documented meaning, computed with the backend's own functions (``K.function``,
``K.gradients``, ``K.batch_get_value``) and written by :class:`.writer.EventWriter`
(tensorboard's event-file writer, tensorboardX's summaries), so no TensorFlow is needed off
TensorFlow.
"""
import os
import sys
import warnings

import numpy as np

from . import writer as _writer

#: the keyword arguments of Keras 2.3.1's TensorFlow 2 variant (tf.keras' callback) that
#: have no meaning here: accepted, with a warning
IGNORED_KEYWORDS = ('profile_batch', 'write_steps_per_second')


def _keras_backend():
    return sys.modules['keras.backend']


def _adapter():
    """The adapter module Keras loaded (``keras.backend.<engine>_backend``), or None."""
    K = _keras_backend()
    return sys.modules.get('keras.backend.%s_backend' % K.backend())


def _dynamic_phase(model):
    """True when Keras feeds the learning phase to the model's functions (a model that uses
    it, the phase not fixed by ``set_learning_phase``), as its validation data then ends
    with the phase."""
    return bool(model.uses_learning_phase) and \
        not isinstance(_keras_backend().learning_phase(), int)


def _distributed_rank():
    """This worker's rank under ``keras_backend.distribute`` (0 without it)."""
    group = sys.modules.get('keras_backend.distribute.group')
    if group is None or not group._State.initialized:
        return 0
    return int(group._State.rank)


def _workers():
    """The number of workers of a ``keras_backend.distribute`` job (1 without it)."""
    group = sys.modules.get('keras_backend.distribute.group')
    if group is None or not group._State.initialized:
        return 1
    return int(group._State.size)


def _restarted():
    """True in a job ``keras_backend.distribute``'s launcher restarted (its attempt > 0)."""
    elastic = sys.modules.get('keras_backend.distribute.elastic')
    if elastic is None:
        return False
    try:
        return elastic.restart_count() > 0
    except ValueError:
        return False


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _weight_images(value, data_format):
    """The images Keras' callback made of a weight (its ``write_images``): a list of
    (height, width, 1) arrays; empty for a weight of rank > 3 after squeezing."""
    w = np.squeeze(np.asarray(value))
    if w.ndim == 2:                          # a dense kernel, the long side across
        if w.shape[0] > w.shape[1]:
            w = w.T
        return [w[:, :, None]]
    if w.ndim == 3:                          # a 1-D convolution's kernels, one image each
        if data_format == 'channels_last':
            w = np.transpose(w, (2, 0, 1))
        return [k[:, :, None] for k in w]
    if w.ndim == 1:                          # a bias
        return [w[None, :, None]]
    return []


def _read_metadata(path):
    """A projector metadata file (one label per line, or a header line and tab-separated
    columns): (labels, header or None)."""
    with open(path) as f:
        lines = [line.rstrip('\n') for line in f if line.strip('\n')]
    if lines and '\t' in lines[0]:
        return [line.split('\t') for line in lines[1:]], lines[0].split('\t')
    return lines, None


def tensorboard_class(base, release=(2, 3, 1)):
    """Keras' ``TensorBoard`` callback class for the Keras release ``release`` (a tuple), a
    subclass of that Keras' ``Callback`` ``base``.

    The callback writes, in ``log_dir`` (one event file per ``fit``):

    * every value of ``logs`` but ``batch`` and ``size`` as a scalar of the same name
      (losses, metrics, ``val_`` ones), at the epoch's index (``update_freq='epoch'``), or
      every ``update_freq`` samples at the number of samples seen (``'batch'``: each
      batch); and the optimizer's learning rate as ``lr`` beside them (unless ``logs``
      holds one, as after ``ReduceLROnPlateau``);
    * with ``histogram_freq`` = n > 0, every n-th epoch: a histogram of each weight
      (``<weight name>`` with ``:`` as ``_``), of each layer's output over the validation
      data (``<layer>_out``, ``<layer>_out_<i>``; ``K.function`` in the test phase), with
      ``write_grads`` of the gradient of the validation loss for each trainable weight
      (``<weight name>_grad``: ``K.gradients`` of ``model.total_loss``, the mean over the
      validation batches weighted by their size), and with ``write_images`` images of
      the kernels and biases (``<weight name>/image``, as Keras' TensorFlow callback drew
      them);
    * with ``write_graph``, the engine's graph where TensorBoard reads it (TensorFlow: the
      adapter's graph, holding the model's tensors) and Keras' layer graph on every other
      engine (a node per layer, its class as the op);
    * with ``embeddings_freq`` = n > 0, every n-th epoch, a projector embedding per layer
      of ``embeddings_layer_names`` (default: every ``Embedding`` layer): Keras 2.2 and
      later the layer's output for ``embeddings_data`` (flattened per sample), Keras 2.0
      and 2.1 the layer's first weight (its embedding matrix), with the labels of
      ``embeddings_metadata`` (a file path, relative to ``log_dir`` or absolute, or a dict
      layer name -> path).

    Under ``keras_backend.distribute`` the samples are the job's (a worker's batch size times
    the workers: the step axis of one process training on the global batch), and only
    rank 0 writes (``ranks='all'``: rank r > 0 too,
    into ``<log_dir>/rank_<r>``); a commit keeps the samples seen, and a run resumed from
    it writes on the same step axis, TensorBoard dropping what the lost run wrote past the
    commit (a ``SessionLog.START`` at the step it writes again from). Without a commit, a
    restarted job writes from step 0 again the same way.

    Raises:
        ImportError: tensorboard or tensorboardX is not installed (when the callback is
            made).
        ValueError: histograms without validation data (or with a generator's), embeddings
            without ``embeddings_data`` (Keras 2.2 and later), at the epoch's end, as
            Keras; a metadata file that does not exist.
        TypeError: an unknown keyword argument.

    Example (what ``keras2_compat`` does when Keras imports ``keras.callbacks``)::

        >>> import keras                                          # doctest: +SKIP
        >>> TensorBoard = tensorboard_class(keras.callbacks.Callback, (2, 3, 1))
        >>> model.fit(x, y, validation_split=0.2, epochs=3,
        ...           callbacks=[TensorBoard('logs/run1', histogram_freq=1)])
    """
    old_embeddings = tuple(release[:2]) < (2, 2)

    class TensorBoard(base):
        __doc__ = tensorboard_class.__doc__

        def __init__(self, log_dir='./logs', histogram_freq=0, batch_size=32,
                     write_graph=True, write_grads=False, write_images=False,
                     embeddings_freq=0, embeddings_layer_names=None,
                     embeddings_metadata=None, embeddings_data=None, update_freq='epoch',
                     ranks=None, **kwargs):
            super(TensorBoard, self).__init__()
            for name in kwargs:
                if name not in IGNORED_KEYWORDS:
                    raise TypeError("TensorBoard: unexpected keyword argument %r" % (name,))
                warnings.warn('TensorBoard: %s (an argument of tf.keras\' callback) has no '
                              'meaning here and is ignored' % name)
            _writer.check_installed()
            if update_freq not in ('batch', 'epoch') and (
                    isinstance(update_freq, bool) or
                    not isinstance(update_freq, (int, np.integer)) or update_freq < 1):
                raise ValueError("TensorBoard: update_freq must be 'batch', 'epoch' or a "
                                 "positive int (samples), got %r" % (update_freq,))
            if ranks not in (None, 'all'):
                raise ValueError("TensorBoard: ranks must be None (rank 0 writes) or 'all', "
                                 "got %r" % (ranks,))
            self.log_dir = log_dir
            self.histogram_freq = histogram_freq
            self.batch_size = batch_size or 32
            self.write_graph = write_graph
            self.write_grads = write_grads
            self.write_images = write_images
            self.embeddings_freq = embeddings_freq
            self.embeddings_layer_names = embeddings_layer_names
            self.embeddings_metadata = embeddings_metadata or {}
            self.embeddings_data = embeddings_data
            self.update_freq = 1 if update_freq == 'batch' else update_freq
            self.ranks = ranks
            self.samples_seen = 0
            self.samples_seen_at_last_write = 0
            self.events = None
            self._graph_written = False
            self._functions = {}
            self._restored = None
            self._batch_logs, self._batch_logs_at, self._epoch_logs_at = {}, -1, -1

        # --- the commit of keras_backend.distribute (elastic training) ---------------------

        def get_state(self):
            """What a commit keeps (numbers): the samples seen (the step axis of
            ``update_freq`` in samples), where the last batch's and the last epoch's
            scalars were written, and the last batch's values (``batch_log.<name>``)."""
            state = {'samples_seen': int(self.samples_seen),
                     'samples_seen_at_last_write': int(self.samples_seen_at_last_write),
                     'batch_logs_at': int(self._batch_logs_at),
                     'epoch_logs_at': int(self._epoch_logs_at)}
            for name, value in self._batch_logs.items():
                state['batch_log.' + name] = float(value)
            return state

        def set_state(self, state):
            self.samples_seen = int(state.get('samples_seen', 0))
            self.samples_seen_at_last_write = int(state.get('samples_seen_at_last_write', 0))
            self._batch_logs_at = int(state.get('batch_logs_at', -1))
            self._epoch_logs_at = int(state.get('epoch_logs_at', -1))
            self._batch_logs = dict((k[len('batch_log.'):], v) for k, v in state.items()
                                    if k.startswith('batch_log.'))
            self._restored = self.samples_seen

        def _after_resume(self, first_step):
            """(purge step, scalars to write again) for a run resumed from a commit, whose
            first write is at ``first_step``: TensorBoard drops the lost run's events from
            the purge step on. By epoch, the resumed epoch's index (its events are all
            written again). By samples, the commit's samples seen S: the lost run may have
            written the epoch's end at S after the commit, which the resumed run writes
            again; the batch's scalars at S, written before the commit, are written again
            from the commit. S + 1 when the commit followed the epoch's end at S."""
            if self.update_freq == 'epoch':
                return first_step, []
            seen = self._restored
            if self._epoch_logs_at == seen:
                return seen + 1, []
            again = sorted(self._batch_logs.items()) if self._batch_logs_at == seen else []
            return seen, again

        # --- the run folder ---------------------------------------------------------------

        def _writer(self, first_step):
            """The event writer (None on a rank that does not write), made for a first
            write at ``first_step``, with the graph: not in ``set_model``, as a run resumed
            from a commit has its state set (``on_train_begin``) only after it."""
            if self.events is None:
                rank = _distributed_rank()
                if rank and self.ranks != 'all':
                    return None
                folder = self.log_dir if not rank else os.path.join(self.log_dir,
                                                                    'rank_%d' % rank)
                purge, again, seen = None, [], self._restored
                if seen is not None:
                    purge, again = self._after_resume(first_step)
                    self._restored = None
                elif _restarted():
                    # a restarted job that found no commit: it starts again from step 0
                    purge = first_step
                self.events = _writer.EventWriter(folder, purge_step=purge)
                if self.write_graph and not self._graph_written:
                    self.events.graph(self._graph_def(self.model))
                    self._graph_written = True
                if again:
                    self._write_logs(dict(again), seen)
            return self.events

        @staticmethod
        def _graph_def(model):
            engine_graph = getattr(_adapter(), '_tensorboard_graph_def', None)
            if engine_graph is not None:
                found = engine_graph()
                if found is not None:
                    return found
            return _writer.layer_graph_def(model)

        # --- scalars --------------------------------------------------------------------

        def _write_logs(self, logs, index):
            events = self._writer(index)
            if events is None:
                return
            for name, value in logs.items():
                if name in ('batch', 'size'):
                    continue
                events.scalar(name, value, index)
            if 'lr' not in logs:
                lr = self._learning_rate()
                if lr is not None:
                    events.scalar('lr', lr, index)
            events.flush()

        def _learning_rate(self):
            optimizer = getattr(self.model, 'optimizer', None)
            for name in ('lr', 'learning_rate'):
                v = getattr(optimizer, name, None)
                if v is not None:
                    try:
                        return float(_keras_backend().get_value(v))
                    except Exception:  # noqa: BLE001 - a number, not a variable
                        try:
                            return float(v)
                        except (TypeError, ValueError):
                            return None
            return None

        def on_batch_end(self, batch, logs=None):
            logs = logs or {}
            if self.update_freq == 'epoch':
                return
            # the job's samples: each worker trains on its share of a global batch
            self.samples_seen += int(logs.get('size', 1)) * _workers()
            if self.samples_seen - self.samples_seen_at_last_write >= self.update_freq:
                self._write_logs(logs, self.samples_seen)
                self.samples_seen_at_last_write = self.samples_seen
                self._batch_logs_at = self.samples_seen
                self._batch_logs = dict((k, float(np.mean(v))) for k, v in logs.items()
                                        if k not in ('batch', 'size'))

        def on_epoch_end(self, epoch, logs=None):
            logs = logs or {}
            if not self.validation_data and self.histogram_freq:
                raise ValueError('If printing histograms, validation_data must be provided, '
                                 'and cannot be a generator.')
            if self.embeddings_freq and self.embeddings_data is None and not old_embeddings:
                raise ValueError('To visualize embeddings, embeddings_data must be provided.')
            index = epoch if self.update_freq == 'epoch' else self.samples_seen
            if self.histogram_freq and epoch % self.histogram_freq == 0:
                self._write_histograms(index)
            if self.embeddings_freq and epoch % self.embeddings_freq == 0:
                self._write_embeddings(epoch, index)
            self._write_logs(logs, index)
            self._epoch_logs_at = index

        def on_train_end(self, logs=None):
            if self.events is not None:
                self.events.close()
                self.events = None

        # --- histograms and images ----------------------------------------------------------

        def _function(self, key, inputs, outputs):
            found = self._functions.get(key)
            if found is None:
                found = self._functions[key] = _keras_backend().function(inputs, outputs)
            return found

        def _fed_tensors(self):
            model = self.model
            tensors = list(model.inputs) + list(model.targets) + list(model.sample_weights)
            if _dynamic_phase(model):
                tensors.append(_keras_backend().learning_phase())
            return tensors

        def _validation_batches(self, tensors):
            data = list(self.validation_data)
            if len(data) != len(tensors):
                raise ValueError('TensorBoard: the validation data holds %d arrays, the model '
                                 'takes %d (inputs, targets, sample weights%s)'
                                 % (len(data), len(tensors),
                                    ', learning phase' if _dynamic_phase(self.model)
                                    else ''))
            sliced = len(data) - (1 if _dynamic_phase(self.model) else 0)
            n = np.shape(data[0])[0]
            for i in range(0, n, self.batch_size):
                batch = [x[i:i + self.batch_size] for x in data[:sliced]]
                if sliced < len(data):
                    batch.append(0)     # the test phase, as Keras' validation feeds
                yield batch, min(self.batch_size, n - i)

        def _write_histograms(self, index):
            events = self._writer(index)
            if events is None:
                return
            K = _keras_backend()
            model = self.model
            layers = list(model.layers)
            weights = [w for layer in layers for w in layer.weights]
            names = [w.name.replace(':', '_') for w in weights]
            for name, value in zip(names, K.batch_get_value(weights)):
                events.histogram(name, value, index)
                if self.write_images:
                    images = _weight_images(value, K.image_data_format())
                    for i, image in enumerate(images[:3]):
                        tag = name + ('/image' if len(images) == 1 else '/image/%d' % i)
                        events.image(tag, image, index)
            tensors = self._fed_tensors()
            n_in = len(model.inputs)
            outputs, out_names = [], []
            for layer in layers:
                try:
                    out = layer.output
                except (AttributeError, ValueError):
                    continue
                if isinstance(out, (list, tuple)):
                    outputs.extend(out)
                    out_names.extend('%s_out_%d' % (layer.name, i) for i in range(len(out)))
                else:
                    outputs.append(out)
                    out_names.append('%s_out' % layer.name)
            phase = [K.learning_phase()] if _dynamic_phase(model) else []
            if outputs:
                f = self._function('outputs', list(model.inputs) + phase, outputs)
                got = [[] for _ in outputs]
                for batch, _ in self._validation_batches(tensors):
                    feed = batch[:n_in] + (batch[-1:] if phase else [])
                    for acc, value in zip(got, f(feed)):
                        acc.append(np.asarray(value))
                for name, parts in zip(out_names, got):
                    events.histogram(name, np.concatenate([p.reshape(-1) for p in parts]),
                                     index)
            if self.write_grads:
                trainable = [w for w in weights if any(w is t for t in
                                                       model.trainable_weights)]
                if trainable:
                    grads = model.optimizer.get_gradients(model.total_loss, trainable)
                    grads = [getattr(g, 'values', g) if type(g).__name__ == 'IndexedSlices'
                             else g for g in grads]
                    f = self._function('grads', tensors, grads)
                    total, seen = None, 0
                    for batch, rows in self._validation_batches(tensors):
                        values = [np.asarray(v, dtype=np.float64) * rows for v in f(batch)]
                        total = values if total is None else \
                            [t + v for t, v in zip(total, values)]
                        seen += rows
                    for w, value in zip(trainable, total or []):
                        events.histogram('%s_grad' % w.name.replace(':', '_'), value / seen,
                                         index)
            events.flush()

        # --- embeddings -----------------------------------------------------------------------

        def _embedding_layers(self):
            names = self.embeddings_layer_names
            if not names:
                names = [layer.name for layer in self.model.layers
                         if type(layer).__name__ == 'Embedding']
            return [layer for layer in self.model.layers if layer.name in names]

        def _metadata(self, layer_name):
            given = self.embeddings_metadata
            path = given if isinstance(given, str) else given.get(layer_name)
            if not path:
                return None, None
            full = path if os.path.isabs(path) else os.path.join(self.log_dir, path)
            if not os.path.isfile(full):
                raise ValueError('TensorBoard: embeddings_metadata names %r for layer %r, '
                                 'which does not exist (a path relative to log_dir %r, or '
                                 'absolute)' % (path, layer_name, self.log_dir))
            return _read_metadata(full)

        def _write_embeddings(self, epoch, index):
            events = self._writer(index)
            if events is None:
                return
            K = _keras_backend()
            layers = self._embedding_layers()
            if not layers:
                return
            if old_embeddings:
                matrices = K.batch_get_value([layer.weights[0] for layer in layers])
            else:
                data = [np.asarray(d) for d in _as_list(self.embeddings_data)]
                if len(data) != len(self.model.inputs):
                    raise ValueError('TensorBoard: embeddings_data holds %d arrays; the model '
                                     'has %d inputs' % (len(data), len(self.model.inputs)))
                phase = [K.learning_phase()] if _dynamic_phase(self.model) else []
                f = self._function(('embeddings',) + tuple(layer.name for layer in layers),
                                   list(self.model.inputs) + phase,
                                   [layer.output for layer in layers])
                n = data[0].shape[0]
                parts = [[] for _ in layers]
                for i in range(0, n, self.batch_size):
                    feed = [d[i:i + self.batch_size] for d in data] + ([0] if phase else [])
                    for acc, value in zip(parts, f(feed)):
                        value = np.asarray(value)
                        acc.append(value.reshape(value.shape[0], -1))
                matrices = [np.concatenate(p, axis=0) for p in parts]
            for layer, matrix in zip(layers, matrices):
                labels, header = self._metadata(layer.name)
                if labels is not None and len(labels) != len(matrix):
                    raise ValueError('TensorBoard: the metadata of layer %r has %d labels, '
                                     'its embedding %d rows' % (layer.name, len(labels),
                                                                len(matrix)))
                events.embedding(layer.name, matrix, epoch, labels, header)
            events.flush()

    TensorBoard.__name__ = TensorBoard.__qualname__ = 'TensorBoard'
    return TensorBoard
