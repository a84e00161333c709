"""Packaging for keras_backend (the Keras 2 backend API on every engine of the engine table).

The extras of the engines come from the engine table (keras_backend/engines.py): each row's
``extra`` installs its ``requires``; tests/test_layout.py checks that each is here.
"""
import importlib.util
import io
import os
import re

from setuptools import find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def _engine_table():
    """keras_backend/engines.py (the engine table), loaded by its path as .ci/summary.py does:
    the package this installs cannot be imported here, and the table needs only the standard
    library."""
    spec = importlib.util.spec_from_file_location(
        '_keras_backend_engine_table', os.path.join(HERE, 'keras_backend', 'engines.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: a GPU-capable TensorFlow beside the table's extras (its 'tensorflow-cpu' is the CPU-only
#: build): pick one, never both
EXTRAS = {'tensorflow': ['tensorflow>=2.12']}
# each engine's extra: the requirements of the rows that name it (the 'theano' extra:
# PyTensor, Theano's maintained successor, on modern Python; the original Theano 1.0.5 in
# its own era)
_TABLE = _engine_table().TABLE
for _row in _TABLE:
    EXTRAS.setdefault(_row.extra, []).extend(_row.requires)
#: the engines, by their titles in the table's order, each once
_TITLES = []
for _row in _TABLE:
    if _row.title not in _TITLES:
        _TITLES.append(_row.title)
with io.open(os.path.join(HERE, 'keras_backend', '__init__.py'), encoding='utf-8') as f:
    VERSION = re.search(r"__version__ = '([^']+)'", f.read()).group(1)
with io.open(os.path.join(HERE, 'README.md'), encoding='utf-8') as f:
    LONG_DESCRIPTION = f.read()

setup(
    name='keras_backend',
    version=VERSION,
    description='The Keras 2 backend API (K) on %s and %s' % (', '.join(_TITLES[:-1]),
                                                           _TITLES[-1]),
    long_description=LONG_DESCRIPTION,
    long_description_content_type='text/markdown',
    license='MIT',
    packages=find_packages(include=['keras_backend', 'keras_backend.*']),
    python_requires='>=3.6',
    install_requires=['numpy'],
    extras_require=dict(EXTRAS, **{
        'test': ['pytest>=7', 'hypothesis'],
        # keras_backend.distribute on Theano/PyTensor (MPI_Allreduce in an engine Op); it
        # needs OpenMPI (Debian: apt-get install openmpi-bin libopenmpi-dev), see README.
        # Ray: keras_backend.distribute.ray's RayExecutor; Ray installs on Python 3.9+ only
        # (not on CPython 3.6, CNTK 2.7's and Theano 1.0.5's interpreter).
        'distribute': ['mpi4py>=3.1', 'ray>=2.9; python_version>="3.9"'],
        # Keras 2.3.1 as a client of keras_backend (tests/test_keras2_client.py).
        # Before Python 3.8 Keras itself installs here; on later Pythons only its
        # dependencies do, and Keras 2.3.1 goes into a folder of its own (README:
        # TensorFlow's Keras 3 occupies the name 'keras' in the virtualenv).
        'keras2': [
            'keras==2.3.1; python_version<"3.8"',
            'h5py==2.10.0; python_version<"3.8"',
            'h5py; python_version>="3.8"',
            'scipy', 'six', 'pyyaml',
        ],
        # Keras 2.3.1's own test suite (tools/keras_suite.py): what its tests import.
        # (pytest 8 removed pytest.warns(None), which Keras' tests use)
        'keras2-tests': ['pytest>=7,<8', 'pytest-timeout', 'pytest-xdist', 'flaky', 'mock',
                         'pandas', 'markdown', 'pillow', 'requests', 'pyux'],
        'examples': ['scikit-learn'],
        # Keras' TensorBoard callback on every engine (keras_backend.tensorboard): tensorboardX
        # writes the event files (pillow its images); tensorboard is the viewer
        # (`tensorboard --logdir ...`), whose event reader and server the tests use too.
        'tensorboard': ['tensorboardX>=2.1', 'pillow', 'tensorboard'],
        # The API reference (docs/reference, Sphinx autodoc + napoleon).
        'docs': ['sphinx>=7; python_version>="3.9"'],
    }),
    entry_points={'console_scripts': ['keras-backend-info=keras_backend.__main__:main']},
    classifiers=[
        'License :: OSI Approved :: MIT License',
        'Programming Language :: Python :: 3',
        'Topic :: Scientific/Engineering :: Artificial Intelligence',
    ],
)
