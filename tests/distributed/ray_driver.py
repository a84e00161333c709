"""The driver of the Ray tests: a RayExecutor of 2 workers on an existing Ray cluster.

    python tests/distributed/ray_driver.py ADDRESS ENGINE OUT

Connects to the cluster at ADDRESS, starts 2 workers of ENGINE, runs k_sgd's training in
both (``run``) and writes what they return (weights, placement, rendezvous) to OUT.json;
then checks the errors: a function that raises on worker 1 (WorkerError naming rank 1),
a worker whose process exits (WorkerLost) and worker 1 SIGKILLed while both allreduce
(WorkerLost naming worker 1, the first to fail, not worker 0 whose collectives then
lose it), writing what was raised to OUT.json too;
last, a run with ``restarts=1`` whose worker 1 exits mid-training in the first attempt.
``tests/distributed`` must be on PYTHONPATH (the workers import k_sgd from it).
"""
import json
import os
import sys


def train(out):
    import numpy as np
    import keras_backend.distribute as kd
    import k_sgd
    k_sgd.main(out, 'ok')
    with open('%s.%d.rendezvous' % (out, kd.rank())) as f:
        rendezvous = f.read()
    return {'weights': np.load('%s.%d.npy' % (out, kd.rank())).tolist(),
            'placement': [kd.rank(), kd.size(), kd.local_rank(), kd.local_size()],
            'rendezvous': rendezvous, 'pid': os.getpid()}


def train_restarting(out):
    """k_sgd's training; in the first attempt worker 1 exits after its second step (its
    actor dies), in the restart both train to the end."""
    import numpy as np
    import keras_backend.distribute as kd
    import k_sgd
    k_sgd.main(out, 'exit' if kd.restart_count() == 0 else 'ok')
    return {'weights': np.load('%s.%d.npy' % (out, kd.rank())).tolist(),
            'restart': kd.restart_count(), 'size': kd.size()}


def fail_on_1():
    import keras_backend.distribute as kd
    if kd.rank() == 1:
        raise ValueError('worker one fails on purpose')
    return kd.rank()


def die_on_1(executable):
    import keras_backend.distribute as kd
    if kd.rank() == 1:
        os._exit(7)
    return kd.rank()


def kill_1_mid_collectives():
    """Both workers allreduce in a loop; worker 1 kills itself with SIGKILL after its
    third allreduce, worker 0's next collectives raise WorkerLost (it never returns)."""
    import signal
    import time
    import keras_backend.distribute as kd
    for step in range(1000):
        kd.allreduce_values(float(kd.rank()))
        if step == 2 and kd.rank() == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.05)
    return kd.rank()


def main(address, engine, out):
    import ray
    from keras_backend.distribute.ray import RayExecutor, WorkerError, WorkerLost
    ray.init(address=address, logging_level='ERROR', log_to_driver=True)
    report = {}
    ex = RayExecutor(RayExecutor.create_settings(timeout_s=400), num_workers=2,
                     backend=engine)
    ex.start()
    report['placements'] = ex.placements
    report['train'] = ex.run(train, args=[out])
    try:
        ex.run(fail_on_1)
        report['fail'] = None
    except WorkerError as e:
        report['fail'] = [type(e).__name__, str(e), e.rank, type(e.__cause__).__name__]
    ex.shutdown()
    ex.start()
    try:
        ex.execute(die_on_1)
        report['die'] = None
    except WorkerLost as e:
        report['die'] = [type(e).__name__, str(e)]
    ex.shutdown()
    ex.start()
    try:
        ex.run(kill_1_mid_collectives)
        report['sigkill'] = None
    except (WorkerLost, WorkerError) as e:
        report['sigkill'] = [type(e).__name__, str(e)]
    ex.shutdown()
    ex.start()
    report['restart'] = ex.run(train_restarting, args=[out + '.restart'], restarts=1)
    ex.shutdown()
    with open(out + '.json', 'w') as f:
        json.dump(report, f)


if __name__ == '__main__':
    main(*sys.argv[1:4])
