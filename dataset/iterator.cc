#include "dataset/iterator.h"

namespace sluice {

std::optional<Element> Iterator::next() {
  Item item;
  if (!execution_->next(item)) return std::nullopt;
  if (!item.ok()) std::rethrow_exception(item.error);
  return std::move(item.element);
}

}  // namespace sluice
