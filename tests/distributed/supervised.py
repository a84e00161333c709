"""A worker for the supervision tests: collectives in a loop, on any engine.

    python -m keras_backend.distribute -n 2 tests/distributed/supervised.py FOLDER MODE

Each worker runs ``kd.init()``, writes its pid to FOLDER/pid.<rank>, then allreduces a
number every 0.05 s. After its third allreduce it writes FOLDER/ready.<rank>. MODE:

* ``loop``: for ever (the test kills the launcher);
* ``kill1``: in the first attempt (``KERAS_BACKEND_DISTRIBUTE_RESTART`` 0 or unset),
  worker 1 kills itself with SIGKILL after its third allreduce, while worker 0 goes on
  (its next collective raises WorkerLost); in a restart, both stop after 5 allreduces
  and exit 0.
"""
import os
import signal
import sys
import time


def main(folder, mode):
    import keras_backend.distribute as kd
    kd.init()
    rank = kd.rank()
    with open(os.path.join(folder, 'pid.%d' % rank), 'w') as f:
        f.write(str(os.getpid()))
    restart = int(os.environ.get('KERAS_BACKEND_DISTRIBUTE_RESTART', '0') or 0)
    steps = 0
    while True:
        kd.allreduce_values(float(rank))
        steps += 1
        if steps == 3:
            with open(os.path.join(folder, 'ready.%d' % rank), 'w') as f:
                f.write(str(time.time()))
            if mode == 'kill1' and restart == 0 and rank == 1:
                os.kill(os.getpid(), signal.SIGKILL)
        if mode == 'kill1' and restart > 0 and steps == 5:
            break
        time.sleep(0.05)
    kd.barrier()


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
