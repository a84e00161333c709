"""Every API name fuzzed on every engine: arguments drawn from its signature (valid ones,
and None, NaN/inf, empty tensors, wrong ranks, dtypes, axes and types), each call held to
the numpy reference (``tests/fuzz_api.py`` says how a case is judged).

A call either gives the reference's numbers, or raises our ValueError / TypeError naming
the function or the argument; never an engine's own exception, another exception type,
or a result where the reference refuses the case. The draws are derandomized (the same
cases on every run: CI's fixed seed); the examples per name are
``KERAS_BACKEND_FUZZ_EXAMPLES`` (default 8, CI's budget; 2 on the compile-bound PyTensor
and Theano 1.0.5, where each case is a compile). A larger budget draws further cases
(README, "Tests", gives the figures of the runs by hand). Every finding of a name is
reported at once, with its arguments.
"""
import collections
import os

import pytest

hypothesis = pytest.importorskip('hypothesis')
from hypothesis import HealthCheck, given, settings  # noqa: E402

import fuzz_api as F  # noqa: E402
from keras_backend import api  # noqa: E402

NAMES = [n for n in api.API_NAMES if n not in F.NOT_DRAWN]
TRIED = collections.Counter()


def _examples(K):
    default = 2 if K.backend() == 'theano' else 8
    return int(os.environ.get('KERAS_BACKEND_FUZZ_EXAMPLES', default))


@pytest.mark.parametrize('name', NAMES)
def test_fuzzed_arguments_get_the_reference_or_a_clear_error(K, name):
    found = []

    @settings(max_examples=_examples(K), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(F.strategy(K, name))
    def case(kwargs):
        TRIED[K.backend()] += 1
        verdict = F.run_case(K, name, kwargs)
        if verdict:
            found.append('%s(%s): %s' % (name, ', '.join('%s=%r' % kv for kv in
                                                         sorted(kwargs.items())), verdict))
    case()
    if found:
        pytest.fail('\n'.join(found), pytrace=False)
