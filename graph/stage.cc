#include "graph/stage.h"

#include <chrono>

#include "core/strings.h"

namespace sluice {

namespace {
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

std::string element_error_context(std::string_view stage, int64_t index,
                                  const ElementOrigin& origin) {
  if (!origin) return str_cat(" [in stage '", stage, "' at element ", index, "]");
  return str_cat(" [in stage '", stage, "' at element ", index, ", from ", origin.to_string(), "]");
}

bool StageIterator::next(Chunk& out, size_t max) {
  if (failed_) return false;
  const size_t before = out.size();
  const int64_t start = now_ns();
  bool more;
  try {
    more = next_internal(out, max);
  } catch (...) {
    // Items appended before the exception are complete: keep them, the error goes after them.
    out.push_back(Item::failure(
        add_error_context(std::current_exception(), str_cat(" [in stage '", stats_->name, "']"))));
    failed_ = true;
    more = true;
  }
  last_call_ns_ = now_ns() - start;
  stats_->call_ns.fetch_add(last_call_ns_, std::memory_order_relaxed);
  int64_t errors = 0;
  for (size_t i = before; i < out.size(); ++i) errors += out[i].ok() ? 0 : 1;
  stats_->elements.fetch_add(static_cast<int64_t>(out.size() - before), std::memory_order_relaxed);
  if (errors > 0) stats_->errors.fetch_add(errors, std::memory_order_relaxed);
  return more;
}

bool StageInput::next(Chunk& out, size_t max) {
  const bool more = iterator_->next(out, max);
  owner_->input_wait_ns.fetch_add(iterator_->last_call_ns(), std::memory_order_relaxed);
  return more;
}

}  // namespace sluice
