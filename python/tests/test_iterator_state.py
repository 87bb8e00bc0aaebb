"""Iterator.save() / restore(): a restored iterator continues with exactly the elements the
saved one would have produced, including the element the binding had already made ahead."""
import numpy as np
import pytest

from sluice.data import Dataset
from sluice.errors import UnimplementedError


def test_save_and_restore_continue_where_the_iterator_was():
    ds = Dataset.range(200).shuffle(20, seed=1).map(lambda x: x * 2).batch(4)
    it = iter(ds)
    for _ in range(3):
        next(it)
    try:
        state = it.save()
    except UnimplementedError:
        pytest.skip("this build of sluice cannot save an iterator's state")
    rest = [b.tolist() for b in it]
    resumed = iter(ds)
    resumed.restore(state)
    assert [b.tolist() for b in resumed] == rest
    with pytest.raises(Exception):
        resumed.restore(b"not a state")


def test_restore_refuses_a_state_of_another_kind():
    it = iter(Dataset.range(3))
    with pytest.raises(ValueError):
        it.restore(b"garbage")
    assert [int(x) for x in it] == [0, 1, 2]
