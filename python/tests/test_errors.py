"""Errors: sluice's C++ errors as sluice.errors (also the natural built-ins), Python exceptions
from map functions with their own type and the element, argument errors naming the argument,
and Ctrl-C during iteration."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import sluice
from sluice.data import Dataset, TFRecordDataset
from sluice.errors import (DataLossError, InvalidArgumentError, NotFoundError, OpError,
                           UnimplementedError)


def test_cpp_errors_are_sluice_errors_and_builtins(tmp_path, records):
    missing = str(tmp_path / "missing.tfrecord")
    with pytest.raises(NotFoundError, match="missing.tfrecord") as caught:
        TFRecordDataset([missing])
    assert isinstance(caught.value, FileNotFoundError) and isinstance(caught.value, OpError)
    assert caught.value.error_code == 5
    with pytest.raises(ValueError):
        Dataset.range(3).batch(-2)
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        Dataset.range(3).batch(0)
    corrupt = tmp_path / "corrupt.tfrecord"
    data = bytearray(open(records[0], "rb").read())
    data[30] ^= 0xFF
    corrupt.write_bytes(bytes(data))
    with pytest.raises(DataLossError, match="corrupt.tfrecord") as lost:
        list(TFRecordDataset([str(corrupt)]))
    assert isinstance(lost.value, OSError)
    with pytest.raises(UnimplementedError):
        sluice.keras.preprocessing.image.ImageDataGenerator(featurewise_center=True)


def test_a_map_function_exception_keeps_its_type_and_names_the_element():
    class Custom(Exception):
        pass

    def f(x):
        if x == 7:
            raise Custom("seven")
        return x

    it = iter(Dataset.range(10).map(f, num_parallel_calls=3))
    got = [int(next(it)) for _ in range(7)]
    with pytest.raises(Custom, match="seven") as caught:
        next(it)
    assert any("element 7" in note for note in caught.value.__notes__)
    # As tf.data: the iteration continues after the failed element.
    assert [int(x) for x in it] == [8, 9]
    assert got == list(range(7))


def test_wrong_arguments_name_themselves():
    with pytest.raises(TypeError, match="batch_size must be an int, not str"):
        Dataset.range(3).batch("4")
    with pytest.raises(TypeError, match="seed must be an int"):
        Dataset.range(3).shuffle(3, seed=1.5)
    with pytest.raises(TypeError, match="map_func must be callable"):
        Dataset.range(3).map(4)
    with pytest.raises(TypeError, match="nested structures"):
        Dataset.from_tensor_slices(((np.arange(2), np.arange(2)), np.arange(2)))
    with pytest.raises(TypeError, match="has no sluice dtype"):
        Dataset.from_tensors(np.array([1 + 2j]))
    with pytest.raises(TypeError, match="Dataset.zip\\(\\): datasets must be a Dataset"):
        Dataset.zip((Dataset.range(2), 3))


def test_ctrl_c_stops_an_iteration_waiting_on_a_slow_pipeline():
    # The pipeline's first element takes minutes (a sleeping generator feeding a shuffle
    # buffer): the interrupt must not wait for it.
    script = textwrap.dedent("""
        import sys, time
        import sluice
        from sluice.data import Dataset
        def slow():
            for i in range(1000):
                time.sleep(0.2)
                yield i
        ds = Dataset.from_generator(slow).shuffle(1000)
        print("iterating", flush=True)
        try:
            for x in ds:
                pass
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
    """)
    env = dict(os.environ)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env,
                             text=True)
    try:
        assert child.stdout.readline().strip() == "iterating"
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert out.strip() == "interrupted"
    assert child.returncode == 3
