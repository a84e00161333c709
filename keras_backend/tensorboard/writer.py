"""TensorBoard event files: tensorboard's own event-file writer and protos (as PyTorch's
``SummaryWriter`` uses them), the summaries built by tensorboardX's summary functions, and
the projector's files by tensorboardX's ``add_embedding``; this module only turns Keras'
values into their calls.

Nothing here imports an engine: the values are numpy arrays the callback fetched.
``flush`` returns when every event given before it is in the file (tensorboard's writer
waits for its queue), so a commit of ``keras_backend.distribute`` made after it never
loses an event written before it.
"""
import os
import time

import numpy as np

INSTALL_HINT = ("pip install 'keras_backend[tensorboard]' (tensorboard writes the event "
                "files, tensorboardX builds the summaries, pillow encodes images)")


def _modules():
    """(tensorboard's EventFileWriter, its event_pb2, tensorboardX's summary module,
    tensorboardX's SummaryWriter); ImportError naming the extra when one is missing."""
    try:
        from tensorboard.compat.proto import event_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
        from tensorboardX import SummaryWriter
        from tensorboardX import summary
    except ImportError as e:
        raise ImportError('keras.callbacks.TensorBoard on keras_backend writes its event files '
                          'with tensorboard and tensorboardX (%s): %s' % (e, INSTALL_HINT)) \
            from None
    return EventFileWriter, event_pb2, summary, SummaryWriter


def check_installed():
    """Raise ImportError (naming the extra to install) when tensorboard or tensorboardX is
    missing."""
    _modules()


def image_to_uint8(image):
    """``image`` (float, any range) as ``uint8``, scaled as TensorFlow's image summary scales
    a float image: all values >= 0, the largest becomes 255; else the largest magnitude
    becomes 127 around 128. A constant zero image stays 0 (128 with negatives).

    Example:
        >>> image_to_uint8(np.array([[0., 0.5, 1.]])).tolist()
        [[0, 128, 255]]
    """
    x = np.asarray(image, dtype=np.float64)
    x = np.where(np.isfinite(x), x, 0.)
    if x.size == 0:
        return x.astype(np.uint8)
    if x.min() >= 0:
        top = x.max()
        scaled = x * (255. / top) if top > 0 else x
    else:
        top = np.abs(x).max()
        scaled = x * (127. / top) + 128.
    return np.clip(np.floor(scaled + 0.5), 0, 255).astype(np.uint8)


class EventWriter(object):
    """One run folder's event file (created on the first write).

    Args:
        log_dir: str, the run folder.
        purge_step: int or None: TensorBoard drops the events of earlier files of this
            folder at steps >= it (a ``SessionLog.START`` at that step: a run resumed from a
            commit rewrites them).

    Example:
        >>> events = EventWriter('logs/run1')                     # doctest: +SKIP
        >>> events.scalar('loss', 0.25, step=3)
        >>> events.histogram('dense_1/kernel_0', np.random.randn(64), step=3)
        >>> events.close()
    """

    def __init__(self, log_dir, purge_step=None):
        self.log_dir = log_dir
        self.purge_step = purge_step
        self._file = None
        self._projector = None
        self._bins = None

    @property
    def file(self):
        if self._file is None:
            EventFileWriter, event_pb2, _, _ = _modules()
            os.makedirs(self.log_dir, exist_ok=True)
            self._file = EventFileWriter(self.log_dir)
            if self.purge_step is not None:
                self._file.add_event(event_pb2.Event(
                    wall_time=time.time(), step=int(self.purge_step),
                    session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START)))
        return self._file

    @property
    def projector(self):
        """tensorboardX's writer, writing no event file: its projector files and bins."""
        if self._projector is None:
            self._projector = _modules()[3](logdir=self.log_dir, write_to_disk=False)
        return self._projector

    def _add(self, summary, step):
        event_pb2 = _modules()[1]
        event = event_pb2.Event(wall_time=time.time(), step=int(step))
        event.summary.ParseFromString(summary.SerializeToString())
        self.file.add_event(event)

    def scalar(self, tag, value, step):
        value = np.asarray(value, dtype=np.float64)
        self._add(_modules()[2].scalar(tag, float(value.reshape(-1)[0]) if value.size == 1
                                       else float(np.mean(value))), step)

    def histogram(self, tag, values, step):
        """A histogram in TensorFlow's buckets (tensorboardX's default); non-finite values
        are left out."""
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        values = values[np.isfinite(values)]
        if values.size:
            self._add(_modules()[2].histogram(tag, values, self.projector.default_bins), step)

    def image(self, tag, image, step):
        """``image``: (height, width, channels) of any float range (see
        :func:`image_to_uint8`)."""
        self._add(_modules()[2].image(tag, image_to_uint8(image), dataformats='HWC'), step)

    def embedding(self, tag, matrix, step, metadata=None, metadata_header=None):
        """The projector's tensor (and labels) for ``tag`` at ``step``: files beside the
        event file, named in ``projector_config.pbtxt``."""
        self.projector.add_embedding(np.asarray(matrix, dtype=np.float32), metadata=metadata,
                                     global_step=int(step), tag=tag,
                                     metadata_header=metadata_header)

    def graph(self, graph_def):
        """``graph_def``: a serialized ``GraphDef`` (bytes)."""
        event_pb2 = _modules()[1]
        self.file.add_event(event_pb2.Event(wall_time=time.time(), graph_def=graph_def))

    def flush(self):
        """Return when every event given so far is in the file."""
        if self._file is not None:
            self._file.flush()

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None
            self.purge_step = None


def layer_graph_def(model):
    """Keras' layer graph of ``model`` as a serialized ``GraphDef``: a node per layer (its
    name; its class as the op; the layers feeding it as inputs, ``name:k`` for a layer's
    k-th output tensor; its output shape as the attribute ``output_shape``), what
    TensorBoard's graph tab shows for an engine whose own graph it cannot read.

    Example:
        >>> EventWriter('logs/run1').graph(layer_graph_def(model))  # doctest: +SKIP
    """
    from tensorboardX.proto import attr_value_pb2, graph_pb2, node_def_pb2
    graph = graph_pb2.GraphDef()
    for layer in model.layers:
        inputs = []
        for node in getattr(layer, '_inbound_nodes', getattr(layer, 'inbound_nodes', [])):
            sources = node.inbound_layers
            if not isinstance(sources, (list, tuple)):
                sources = [sources]
            indices = node.tensor_indices
            if not isinstance(indices, (list, tuple)):
                indices = [indices]
            for source, k in zip(sources, indices):
                name = source.name if not k else '%s:%d' % (source.name, k)
                if name not in inputs:
                    inputs.append(name)
        attr = {}
        try:
            shape = layer.output_shape
        except (AttributeError, RuntimeError):
            shape = None
        if shape is not None:
            attr['output_shape'] = attr_value_pb2.AttrValue(s=str(shape).encode('utf-8'))
        graph.node.extend([node_def_pb2.NodeDef(name=layer.name, op=type(layer).__name__,
                                                input=inputs, attr=attr)])
    return graph.SerializeToString()
