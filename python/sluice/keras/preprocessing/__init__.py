"""Keras preprocessing for sluice."""
from . import image
