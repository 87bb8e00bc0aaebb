// The extension module sluice._sluice. The Python package (python/sluice) presents it under
// tf.data's module names; see python/README.md.
#include "python/binding.h"
#include "python/functions.h"
#include "python/iterators.h"

PYBIND11_MODULE(_sluice, m) {
  using namespace sluice::python;
  m.doc() = "sluice's C++ engine for Python: datasets, ops and zero-copy batches";
  init_numpy();
  bind_errors(m);
  bind_tensors(m);
  bind_functions(m);
  bind_iterators(m);
  bind_datasets(m);
  bind_image_ops(m);
  bind_io(m);
  bind_keras(m);
  bind_torch(m);
}
