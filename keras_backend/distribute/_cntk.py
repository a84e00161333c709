"""CNTK 2.7's collectives, moved to keras_backend.cntk_backend.collectives: this name stays
until the engine table's ``collectives`` column names the new module (distribute reads only
the public names: start, allreduce_tensor, allreduce_array, barrier, lost_reason, stop)."""
from keras_backend.cntk_backend.collectives import *  # noqa: F401,F403
