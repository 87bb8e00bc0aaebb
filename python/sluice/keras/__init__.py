"""Keras names for sluice: sluice.keras.preprocessing.image.ImageDataGenerator."""
from . import preprocessing
