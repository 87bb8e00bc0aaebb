#include "core/errors.h"

namespace sluice {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kCancelled: return "Cancelled";
    case ErrorCode::kUnknown: return "Unknown";
    case ErrorCode::kInvalidArgument: return "InvalidArgument";
    case ErrorCode::kNotFound: return "NotFound";
    case ErrorCode::kAlreadyExists: return "AlreadyExists";
    case ErrorCode::kResourceExhausted: return "ResourceExhausted";
    case ErrorCode::kFailedPrecondition: return "FailedPrecondition";
    case ErrorCode::kOutOfRange: return "OutOfRange";
    case ErrorCode::kUnimplemented: return "Unimplemented";
    case ErrorCode::kInternal: return "Internal";
    case ErrorCode::kDataLoss: return "DataLoss";
  }
  return "Unknown";
}

std::exception_ptr add_error_context(const std::exception_ptr& error, std::string_view context) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return e.with_context(context);
  } catch (const std::exception& e) {
    return std::make_exception_ptr(Unknown(std::string(e.what()).append(context)));
  } catch (...) {
    return std::make_exception_ptr(Unknown(std::string("unknown exception").append(context)));
  }
}

std::string error_message(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace sluice
