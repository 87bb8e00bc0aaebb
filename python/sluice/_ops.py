"""How sluice's C++ ops are offered in Python (sluice.image, sluice.io)."""
import functools


class OpFactory:
    """A sluice C++ op, as tf.image's functions are used.

    op(x, ...) runs the op now on a NumPy value (in C++, the GIL released) and returns NumPy.
    op(...) without the input returns a sluice.Op with those arguments, for Dataset.map, where
    it runs on every element in C++ without the GIL. The factory itself can be given to map
    too: ds.map(sluice.image.decode_image) is ds.map(sluice.image.decode_image()).
    """

    __slots__ = ("_factory", "__dict__")

    def __init__(self, factory):
        self._factory = factory
        functools.update_wrapper(self, factory)

    def __call__(self, *args, **kwargs):
        return self._factory(*args, **kwargs)

    def __sluice_function__(self):
        return self._factory()

    def on(self, key):
        """The op with default arguments, reading the component `key` (an index or a name)."""
        return self._factory().on(key)

    def __repr__(self):
        return f"<sluice op factory {self.__name__}>"
