"""``python -m keras_backend.distribute -n N script.py``: see
:mod:`keras_backend.distribute.launcher`."""
import sys

from .launcher import main

if __name__ == '__main__':
    sys.exit(main())
