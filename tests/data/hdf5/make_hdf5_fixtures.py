"""Writes the h5py fixtures that tests/formats/hdf5_reader_test.cc reads with sluice's own HDF5
reader. Run from anywhere with a Python that has h5py and numpy:

    python3 tests/data/hdf5/make_hdf5_fixtures.py

Every file holds the same content, written once in h5py's default format (superblock v0, v1 object
headers, symbol-table groups: what `model.save_weights` produces) and once with libver='latest'
(superblock v3, v2 "OHDR" headers with checksums, link-message groups). The values are a function
of the index so the test can recompute them.
"""
import os

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def ramp(shape, base, dtype):
    n = int(np.prod(shape)) if shape else 1
    return (base + 0.5 * np.arange(n)).astype(dtype).reshape(shape)


def fill(f):
    # Keras' save_weights layout: fixed-length byte-string attributes, float32 datasets under
    # intermediate groups.
    f.attrs['layer_names'] = np.asarray([b'conv2d', b'dense', b'flatten'])
    f.attrs['backend'] = b'tensorflow'
    f.attrs['keras_version'] = b'2.15.0'
    conv = f.create_group('conv2d')
    conv.attrs['weight_names'] = np.asarray([b'conv2d/kernel:0', b'conv2d/bias:0'])
    conv.create_dataset('conv2d/kernel:0', data=ramp((3, 3, 1, 2), 1.0, np.float32))
    conv.create_dataset('conv2d/bias:0', data=ramp((2,), -1.0, np.float32))
    dense = f.create_group('dense')
    dense.attrs['weight_names'] = np.asarray([b'dense/kernel:0', b'dense/bias:0'])
    dense.create_dataset('dense/kernel:0', data=ramp((4, 3), 6.0, np.float32))
    dense.create_dataset('dense/bias:0', data=ramp((3,), 7.0, np.float32))
    flatten = f.create_group('flatten')
    flatten.attrs['weight_names'] = np.asarray([])  # h5py: an empty float64 array.

    # Variable-length UTF-8 strings (h5py's str attributes), scalar and 1-D.
    strings = f.create_group('strings')
    strings.attrs['vlen_scalar'] = 'hello, sluice'
    strings.attrs.create('vlen_list', ['alpha', 'beta', '', 'delta ünïcode'],
                         dtype=h5py.string_dtype('utf-8'))
    strings.attrs['fixed_scalar'] = np.bytes_('fixed')
    # Attributes added after the group's header was sized: libhdf5 moves them into continuation
    # blocks (few enough to stay compact in 'latest' files too).
    padded = f.create_group('padded')
    for i in range(6):
        padded.attrs['padding_%d' % i] = np.bytes_('x' * 300 + str(i))
    # More attributes than a v2 header keeps compact (8): dense storage in 'latest' files.
    dense = strings.create_group('dense_attributes')  # The root stays within 8 links too.
    for i in range(12):
        dense.attrs['a%02d' % i] = np.bytes_(str(i))

    # Other numeric types and layouts.
    numbers = f.create_group('numbers')
    numbers.create_dataset('float64', data=ramp((2, 3), 0.25, np.float64))
    numbers.create_dataset('int32', data=np.arange(-3, 3, dtype=np.int32))
    numbers.create_dataset('uint8', data=np.arange(250, 256, dtype=np.uint8))
    numbers.create_dataset('scalar', data=np.float32(42.5))
    numbers.create_dataset('big_endian', data=np.arange(4, dtype='>f4'))
    numbers.create_dataset('chunked', data=ramp((8, 8), 0.0, np.float32), chunks=(4, 4))
    # Edge chunks hang over the dataset; deflate after shuffle, as h5py applies them. (A group of
    # their own keeps /numbers within the 8 links of a compact group.)
    filtered = f.create_group('filtered')
    filtered.create_dataset('deflated', data=ramp((7, 9), -5.0, np.float32), chunks=(3, 4),
                           compression='gzip', shuffle=True)
    filtered.create_dataset('fletcher32', data=ramp((4,), 0.0, np.float32), fletcher32=True)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    numbers.create_dataset('compact', data=ramp((5,), 3.0, np.float32), dcpl=dcpl)
    numbers.create_dataset('empty', shape=(0, 4), dtype=np.float32)

    # More links than a compact link group holds (8 by default): dense storage in 'latest' files.
    many = f.create_group('many')
    for i in range(10):
        many.create_dataset('d%d' % i, data=np.float32(i))


def main():
    for name, libver in (('h5py_default.h5', 'earliest'), ('h5py_latest.h5', 'latest')):
        path = os.path.join(HERE, name)
        with h5py.File(path, 'w', libver=libver) as f:
            fill(f)
        print(path, os.path.getsize(path), 'bytes')


if __name__ == '__main__':
    main()
