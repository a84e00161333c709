"""Shape manipulation ops against the reference (eager per name, symbolic grouped)."""
import numpy as np
import pytest

import reference as R
from helpers import (assert_dtype, assert_values, bind, randn, run_cases, select, spec,
                     spec_names)

X = randn(2, 3, 4)
X2 = randn(3, 4, seed=1)
IMG = randn(2, 3, 4, 2, seed=2)          # channels_last (batch, rows, cols, ch)
IMG_CF = np.transpose(IMG, (0, 3, 1, 2)).copy()
VOL = randn(2, 2, 3, 2, 2, seed=3)       # channels_last (batch, d, h, w, ch)
VOL_CF = np.transpose(VOL, (0, 4, 1, 2, 3)).copy()
IDX = np.array([[0, 3], [2, 1], [4, 4]], dtype=np.int32)
NB = (0, 1)


def chunks(names, n):
    return [tuple(names[i:i + n]) for i in range(0, len(names), n)]


SPECS = [
    spec('concatenate', lambda K, x, y: K.concatenate([x, y]), [X, randn(2, 3, 2, seed=4)],
         R.concatenate([X, randn(2, 3, 2, seed=4)]), none_in=NB),
    spec('concatenate:axis1', lambda K, x, y: K.concatenate([x, y], axis=1),
         [X, randn(2, 1, 4, seed=5)], R.concatenate([X, randn(2, 1, 4, seed=5)], 1), none_in=NB),
    spec('concatenate:axis0', lambda K, x, y: K.concatenate([x, y], axis=0), [X2, X2 * 2],
         R.concatenate([X2, X2 * 2], 0), none_in=(), none_out=()),
    spec('reshape', lambda K, x: K.reshape(x, (-1, 12)), [X], R.reshape(X, (-1, 12))),
    spec('reshape:full', lambda K, x: K.reshape(x, (2, 4, 3)), [X], R.reshape(X, (2, 4, 3)),
         none_out=()),
    spec('reshape:inner', lambda K, x: K.reshape(x, (-1, 3, 2, 2)), [X],
         R.reshape(X, (-1, 3, 2, 2))),
    spec('permute_dimensions', lambda K, x: K.permute_dimensions(x, (0, 2, 1)), [X],
         R.permute_dimensions(X, (0, 2, 1))),
    spec('permute_dimensions:batch_moves', lambda K, x: K.permute_dimensions(x, (2, 0, 1)), [X],
         R.permute_dimensions(X, (2, 0, 1)), none_out=(1,)),
    spec('resize_images', lambda K, x: K.resize_images(x, 2, 3, 'channels_last'), [IMG],
         R.resize_images(IMG, 2, 3, 'channels_last')),
    spec('resize_images:cf', lambda K, x: K.resize_images(x, 3, 2, 'channels_first'), [IMG_CF],
         R.resize_images(IMG_CF, 3, 2, 'channels_first')),
    spec('resize_images:bilinear',
         lambda K, x: K.resize_images(x, 2, 3, 'channels_last', interpolation='bilinear'),
         [IMG], R.resize_images(IMG, 2, 3, 'channels_last', 'bilinear')),
    spec('resize_images:bilinear_cf',
         lambda K, x: K.resize_images(x, 3, 2, 'channels_first', interpolation='bilinear'),
         [IMG_CF], R.resize_images(IMG_CF, 3, 2, 'channels_first', 'bilinear')),
    spec('resize_volumes', lambda K, x: K.resize_volumes(x, 2, 1, 3, 'channels_last'), [VOL],
         R.resize_volumes(VOL, 2, 1, 3, 'channels_last')),
    spec('resize_volumes:cf', lambda K, x: K.resize_volumes(x, 1, 2, 2, 'channels_first'),
         [VOL_CF], R.resize_volumes(VOL_CF, 1, 2, 2, 'channels_first')),
    spec('repeat_elements', lambda K, x: K.repeat_elements(x, 3, 1), [X],
         R.repeat_elements(X, 3, 1)),
    spec('repeat_elements:last', lambda K, x: K.repeat_elements(x, 2, -1), [X],
         R.repeat_elements(X, 2, -1)),
    spec('repeat', lambda K, x: K.repeat(x, 3), [X2], R.repeat(X2, 3)),
    spec('tile', lambda K, x: K.tile(x, (1, 2, 3)), [X], R.tile(X, (1, 2, 3))),
    spec('tile:int', lambda K, x: K.tile(x, 2), [X2], R.tile(X2, 2), none_out=(0,)),
    spec('flatten', lambda K, x: K.flatten(x), [X], R.flatten(X)),
    spec('batch_flatten', lambda K, x: K.batch_flatten(x), [X], R.batch_flatten(X)),
    spec('batch_flatten:4d', lambda K, x: K.batch_flatten(x), [IMG], R.batch_flatten(IMG)),
    spec('expand_dims', lambda K, x: K.expand_dims(x), [X], R.expand_dims(X, -1)),
    spec('expand_dims:1', lambda K, x: K.expand_dims(x, 1), [X], R.expand_dims(X, 1)),
    spec('expand_dims:0', lambda K, x: K.expand_dims(x, 0), [X2], R.expand_dims(X2, 0),
         none_out=(1,)),
    spec('squeeze', lambda K, x: K.squeeze(x, 1), [randn(3, 1, 4)], R.squeeze(randn(3, 1, 4), 1)),
    spec('squeeze:last', lambda K, x: K.squeeze(x, -1), [randn(3, 4, 1)],
         R.squeeze(randn(3, 4, 1), -1)),
    spec('temporal_padding', lambda K, x: K.temporal_padding(x), [X], R.temporal_padding(X)),
    spec('temporal_padding:asym', lambda K, x: K.temporal_padding(x, (2, 0)), [X],
         R.temporal_padding(X, (2, 0))),
    spec('spatial_2d_padding', lambda K, x: K.spatial_2d_padding(x), [IMG],
         R.spatial_2d_padding(IMG)),
    spec('spatial_2d_padding:asym_cf',
         lambda K, x: K.spatial_2d_padding(x, ((0, 2), (1, 3)), 'channels_first'), [IMG_CF],
         R.spatial_2d_padding(IMG_CF, ((0, 2), (1, 3)), 'channels_first')),
    spec('spatial_2d_padding:asym_cl',
         lambda K, x: K.spatial_2d_padding(x, ((2, 1), (0, 1)), 'channels_last'), [IMG],
         R.spatial_2d_padding(IMG, ((2, 1), (0, 1)), 'channels_last')),
    spec('spatial_3d_padding', lambda K, x: K.spatial_3d_padding(x), [VOL],
         R.spatial_3d_padding(VOL)),
    spec('spatial_3d_padding:asym_cf',
         lambda K, x: K.spatial_3d_padding(x, ((1, 0), (0, 2), (2, 1)), 'channels_first'),
         [VOL_CF], R.spatial_3d_padding(VOL_CF, ((1, 0), (0, 2), (2, 1)), 'channels_first')),
    spec('stack', lambda K, x, y: K.stack([x, y]), [X2, X2 + 1.], R.stack([X2, X2 + 1.]),
         none_out=(1,), none_in=NB),
    spec('stack:axis1', lambda K, x, y: K.stack([x, y], axis=1), [X2, X2 + 1.],
         R.stack([X2, X2 + 1.], 1), none_in=NB),
    spec('stack:last', lambda K, x, y: K.stack([x, y], axis=-1), [X, X * 2],
         R.stack([X, X * 2], -1), none_in=NB),
    spec('one_hot', lambda K, i: K.one_hot(i, 5), [IDX], R.one_hot(IDX, 5)),
    spec('one_hot:1d', lambda K, i: K.one_hot(i, 6), [IDX[:, 0]], R.one_hot(IDX[:, 0], 6)),
    spec('reverse', lambda K, x: K.reverse(x, 1), [X], R.reverse(X, 1)),
    spec('reverse:list', lambda K, x: K.reverse(x, [0, -1]), [X], R.reverse(X, [0, -1])),
    spec('slice', lambda K, x: K.slice(x, (0, 1, 1), (2, 2, 2)), [X],
         R.slice(X, (0, 1, 1), (2, 2, 2)), none_out=()),
    spec('slice:to_end', lambda K, x: K.slice(x, (1, 0, 2), (-1, 2, -1)), [X],
         R.slice(X, (1, 0, 2), (-1, 2, -1))),
]

NAMES = spec_names(SPECS)


@pytest.mark.parametrize('name', NAMES)
def test_eager(K, name):
    run_cases(K, bind(K, select(SPECS, name), symbolic=False))


@pytest.mark.parametrize('names', chunks(NAMES, 12), ids=lambda n: n[0] + '..')
def test_symbolic_grouped(K, names):
    specs = [s for n in names for s in select(SPECS, n)]
    run_cases(K, bind(K, specs, eager=False))


@pytest.mark.parametrize('args', [(5,), (2, 9), (1, 10, 3), (6, 0, -2), (0,)])
def test_arange(K, args):
    want = R.arange(*args)
    out = K.arange(*args)
    val = K.eval(out)
    # assert_dtype: CNTK has no integer tensors, int32 results are floatx() there
    assert_dtype(K, K.dtype(out), 'int32', 'arange')
    assert_values(val, want, what='arange%r' % (args,))
    assert tuple(K.int_shape(out)) in ((len(want),), (None,))


def test_arange_float_dtype(K):
    out = K.eval(K.arange(1, 3, 0.5, dtype='float32'))
    np.testing.assert_allclose(out, R.arange(1, 3, 0.5, 'float32'))
    assert out.dtype == np.float32


def test_one_hot_class_axis_last(K):
    idx = np.array([[1, 0, 3]], dtype=np.int32)
    out = K.eval(K.one_hot(K.constant(idx, dtype='int32'), 4))
    assert out.shape == (1, 3, 4)
    assert str(out.dtype) == K.floatx()
    np.testing.assert_array_equal(out[0].argmax(-1), idx[0])
    np.testing.assert_array_equal(out.sum(-1), np.ones((1, 3)))

