"""Run by every Python process that ``tools/keras_suite.py`` starts for Keras 2.0.x or 2.1.x on
one of our adapters (this folder is put on its ``PYTHONPATH``): ``keras2_compat.install()``
before anything imports Keras, in the test process and in the processes it spawns (Keras'
``OrderedEnqueuer`` with ``multiprocessing``'s spawn start method re-imports the test module, and
with it Keras, in each worker; a script of the user's calls the line at its top, which spawned
workers run again)."""
import os

if os.environ.get('KERAS_SUITE_COMPAT') == '1':
    import keras_backend.keras2_compat
    keras_backend.keras2_compat.install()
