"""Stands in for Slurm's ``srun`` on one machine, for the MPI engines: no Slurm runs here.

    mpirun -np N python tests/distributed/as_srun.py JOB_ID script.py [args]

Each rank moves mpirun's placement (``OMPI_COMM_WORLD_*``) into the variables ``srun``
sets (``SLURM_PROCID``, ``SLURM_NTASKS``, ``SLURM_LOCALID``, ``SLURM_NODEID``,
``SLURM_STEP_NODELIST`` = this host's name, ``SLURM_STEP_TASKS_PER_NODE`` ...), removes
the ``OMPI_COMM_WORLD_*`` variables, and runs the script as ``__main__``. What stays is
what MPI_Init needs (mpirun's PMIx server stands in for the PMI / PMIx that ``srun
--mpi=pmix`` gives an OpenMPI built with Slurm support), so ``keras_backend.distribute``
must take rank, size and local rank from the ``SLURM_*`` variables alone.
"""
import os
import runpy
import socket
import sys


def slurm_environment(rank, size, job_id, host=None):
    """The variables ``srun -n size`` sets for task ``rank`` on one node."""
    host = host or socket.gethostname()
    return {'SLURM_JOB_ID': str(job_id), 'SLURM_JOBID': str(job_id), 'SLURM_STEP_ID': '0',
            'SLURM_STEPID': '0', 'SLURM_PROCID': str(rank), 'SLURM_LOCALID': str(rank),
            'SLURM_NODEID': '0', 'SLURM_NTASKS': str(size), 'SLURM_NPROCS': str(size),
            'SLURM_STEP_NUM_TASKS': str(size), 'SLURM_STEP_NUM_NODES': '1',
            'SLURM_NNODES': '1', 'SLURM_JOB_NODELIST': host, 'SLURM_NODELIST': host,
            'SLURM_STEP_NODELIST': host, 'SLURM_TASKS_PER_NODE': str(size),
            'SLURM_STEP_TASKS_PER_NODE': str(size), 'SLURMD_NODENAME': host}


def main():
    job_id, script = sys.argv[1], sys.argv[2]
    rank = int(os.environ['OMPI_COMM_WORLD_RANK'])
    size = int(os.environ['OMPI_COMM_WORLD_SIZE'])
    for k in list(os.environ):
        if k.startswith('OMPI_COMM_WORLD_'):
            del os.environ[k]
    os.environ.update(slurm_environment(rank, size, job_id))
    sys.argv = sys.argv[2:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name='__main__')


if __name__ == '__main__':
    main()
