"""A worker for the binding tests: where worker 0's side channels listen.

    python -m keras_backend.distribute -n 2 tests/distributed/listening.py OUT

After ``kd.init()`` (the stall check on, its default 60 s), worker 0 writes OUT.json:
the port of the stall check's monitor and the address it bound (``stall._S.address``),
the coordinator address (JAX), ``TF_CONFIG``'s worker addresses (TensorFlow) and
whether the job's secret reached it (not its value). The test reads the listening
sockets of those ports from /proc/net/tcp and tcp6 while the workers wait at a barrier
for OUT.done.
"""
import json
import os
import sys
import time


def main(out):
    import keras_backend.distribute as kd
    from keras_backend.distribute import stall
    kd.init()
    if kd.rank() == 0:
        tf_config = os.environ.get('TF_CONFIG', '')
        report = {'monitor': list(stall._S.address) if stall._S.address else None,
                  'coordinator': os.environ.get('KERAS_BACKEND_DISTRIBUTE_COORDINATOR', ''),
                  'tf_workers': json.loads(tf_config)['cluster']['worker'] if tf_config
                  else [],
                  'secret': bool(os.environ.get('KERAS_BACKEND_DISTRIBUTE_SECRET'))}
        with open(out + '.tmp', 'w') as f:
            json.dump(report, f)
        os.rename(out + '.tmp', out + '.json')
        deadline = time.time() + 300
        while not os.path.exists(out + '.done') and time.time() < deadline:
            time.sleep(0.1)
    kd.barrier()


if __name__ == '__main__':
    main(sys.argv[1])
