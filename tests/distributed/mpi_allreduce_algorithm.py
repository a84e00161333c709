"""The MPI transport alone (``keras_backend.distribute.mpi``), under ``mpirun -np N``:
start it as ``init`` does, sum a large and a small buffer, and print, from rank 0, the
Iallreduce algorithm this process's environment named to Open MPI and whether the sums
were right.

    mpirun -np 2 python tests/distributed/mpi_allreduce_algorithm.py
"""
import json
import os

import numpy as np

from keras_backend.distribute import mpi, rendezvous

MPI = mpi.module()
rank, size = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
mpi.start(size, 60)
ok = True
for n in (1 << 20, 3):       # the ring's size and a tiny one; every rank's values differ
    x = np.arange(n, dtype=np.float32) * (rank + 1)
    got = mpi.allreduce_numpy(x, average=False)
    ok = ok and bool(np.array_equal(got, np.arange(n, dtype=np.float32) * size * (size + 1) / 2))
    got = mpi.allreduce_numpy(x.astype(np.float16)[:3], average=True)
    ok = ok and bool(np.allclose(got.astype(np.float32), x[:3] / (rank + 1) * (size + 1) / 2,
                                 rtol=1e-3))
if rank == 0:
    named = os.environ.get(rendezvous.IALLREDUCE_ALGORITHM[0])
    print('RESULT ' + json.dumps({'algorithm': named, 'ok': ok, 'size': size}))
