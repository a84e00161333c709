"""Moved: ``keras_backend.jax_backend.collectives`` (kept until the engine table names it)."""
from keras_backend.jax_backend.collectives import *  # noqa: F401,F403
from keras_backend.jax_backend.collectives import _S, _array_allreduce, _block_of, _global, _local_block  # noqa: F401,E501
