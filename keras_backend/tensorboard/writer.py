"""TensorBoard event files, written by tensorboardX (its ``SummaryWriter``, event file writer
and protos): this module only turns Keras' values into its calls.

Nothing here imports an engine: the values are numpy arrays the callback fetched.
"""
import os

import numpy as np

INSTALL_HINT = ("pip install 'keras_backend[tensorboard]' (tensorboardX writes the event "
                "files; pillow encodes images)")


def _summary_writer_class():
    try:
        from tensorboardX import SummaryWriter
    except ImportError as e:
        raise ImportError('keras.callbacks.TensorBoard on keras_backend writes its event files '
                          'with tensorboardX, which is not installed here (%s): %s'
                          % (e, INSTALL_HINT)) from None
    return SummaryWriter


def check_installed():
    """Raise ImportError (naming the extra to install) when tensorboardX is missing."""
    _summary_writer_class()


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
            folder at steps >= it (a run resumed from a commit rewrites them).
    """

    def __init__(self, log_dir, purge_step=None):
        self.log_dir = log_dir
        self.purge_step = purge_step
        self._writer = None

    @property
    def writer(self):
        if self._writer is None:
            os.makedirs(self.log_dir, exist_ok=True)
            self._writer = _summary_writer_class()(logdir=self.log_dir,
                                                   purge_step=self.purge_step)
        return self._writer

    def scalar(self, tag, value, step):
        self.writer.add_scalar(tag, float(np.asarray(value).reshape(-1)[0])
                               if np.size(value) == 1 else float(np.mean(value)), int(step))

    def histogram(self, tag, values, step):
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        values = values[np.isfinite(values)]
        if values.size:
            self.writer.add_histogram(tag, values, int(step))

    def image(self, tag, image, step):
        """``image``: (height, width, channels) of any float range (see
        :func:`image_to_uint8`)."""
        self.writer.add_image(tag, image_to_uint8(image), int(step), dataformats='HWC')

    def embedding(self, tag, matrix, step, metadata=None, metadata_header=None):
        self.writer.add_embedding(np.asarray(matrix, dtype=np.float32), metadata=metadata,
                                  global_step=int(step), tag=tag,
                                  metadata_header=metadata_header)

    def graph(self, graph_def):
        """``graph_def``: a serialized ``GraphDef`` (bytes)."""
        from tensorboardX.proto import event_pb2
        self.writer._get_file_writer().add_event(event_pb2.Event(graph_def=graph_def))

    def flush(self):
        if self._writer is not None:
            self._writer.flush()

    def close(self):
        if self._writer is not None:
            self._writer.close()
            self._writer = None
            self.purge_step = None


def layer_graph_def(model):
    """Keras' layer graph of ``model`` as a serialized ``GraphDef``: a node per layer (its
    name; its class as the op; the layers feeding it as inputs, ``name:k`` for a layer's
    k-th output tensor; its output shape as the attribute ``output_shape``), what
    TensorBoard's graph tab shows for an engine whose own graph it cannot read."""
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
