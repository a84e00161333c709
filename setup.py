"""Packaging for keras_backend (the Keras 2 backend API on TensorFlow, Theano, CNTK and JAX).

The extras of the engines are the ``extra`` column of the engine table
(keras_backend/engines.py); tests/test_layout.py checks that each is here.
"""
import io
import os
import re

from setuptools import find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))
with io.open(os.path.join(HERE, 'keras_backend', '__init__.py'), encoding='utf-8') as f:
    VERSION = re.search(r"__version__ = '([^']+)'", f.read()).group(1)
with io.open(os.path.join(HERE, 'README.md'), encoding='utf-8') as f:
    LONG_DESCRIPTION = f.read()

setup(
    name='keras_backend',
    version=VERSION,
    description='The Keras 2 backend API (K) on TensorFlow 2, Theano/PyTensor, CNTK 2.7 and JAX',
    long_description=LONG_DESCRIPTION,
    long_description_content_type='text/markdown',
    license='MIT',
    packages=find_packages(include=['keras_backend', 'keras_backend.*']),
    python_requires='>=3.6',
    install_requires=['numpy'],
    extras_require={
        # A GPU-capable TensorFlow, or the CPU-only build; pick one, never both.
        'tensorflow': ['tensorflow>=2.12'],
        'tensorflow-cpu': ['tensorflow-cpu>=2.12'],
        # PyTensor (Theano's maintained successor) on modern Python; the original
        # Theano 1.0.5 in its own era (CPython 3.6 with numpy 1.19).
        'theano': [
            'pytensor>=2.18; python_version>="3.10"',
            'Theano==1.0.5; python_version<"3.8"',
            'numpy<1.20; python_version<"3.8"',
            'scipy; python_version<"3.8"',
        ],
        # CNTK 2.7 ships wheels for CPython 3.5/3.6 only (see README).
        'cntk': ['cntk==2.7.post2; python_version<"3.7"'],
        # JAX's CPU wheel (Python 3.11+); for a GPU, install JAX's CUDA wheel instead
        # (pip install "jax[cuda12]"), see README.
        'jax': ['jax>=0.4.30; python_version>="3.11"'],
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
        # The API reference (docs/reference, Sphinx autodoc + napoleon).
        'docs': ['sphinx>=7; python_version>="3.9"'],
    },
    entry_points={'console_scripts': ['keras-backend-info=keras_backend.__main__:main']},
    classifiers=[
        'License :: OSI Approved :: MIT License',
        'Programming Language :: Python :: 3',
        'Topic :: Scientific/Engineering :: Artificial Intelligence',
    ],
)
