"""Moved to :mod:`keras_backend.theano_backend.collectives`; kept while the engine table names
this path (``collectives`` column)."""
from keras_backend.theano_backend.collectives import *  # noqa: F401,F403
