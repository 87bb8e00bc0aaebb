#include "sluice/strategy/multi_worker_mirrored_strategy.h"

// The C API only: the deprecated MPI C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "sluice/core/errors.h"
#include "sluice/core/memory_block.h"
#include "sluice/core/strings.h"
#include "sluice/core/tensor.h"
#include "sluice/strategy/host_shared_memory.h"
#include "sluice/strategy/worker_parts.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

// Set when a collective failed or a strategy was destroyed by an exception: the process then
// aborts the MPI job at exit rather than finalising (MPI_Finalize would wait for workers that are
// still inside a collective with this one).
std::atomic<bool> g_abort_at_exit{false};
bool g_we_initialised = false;

void finish_mpi_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (g_abort_at_exit.load()) {
    MPI_Abort(MPI_COMM_WORLD, 1);
  } else {
    MPI_Finalize();
  }
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return str_cat("MPI error ", code);
  return std::string(text, static_cast<size_t>(length));
}

void ensure_mpi_initialised() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (initialised) return;  // The program owns MPI: it finalises it too.
    int provided = 0;
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) {
      throw Internal("MultiWorkerMirroredStrategy: MPI_Init_thread failed: " + mpi_error_text(rc));
    }
    g_we_initialised = true;
    std::atexit(finish_mpi_at_exit);
  });
}

}  // namespace

// The worker communicator and the point-to-point collectives built on it. Each element of a sum is
// added up in worker order on one worker and the result sent to the others: that is what makes the
// result identical on every worker (an MPI_Allreduce may combine in a different order on different
// ranks), and point-to-point requests tell exactly which worker is missing when one does not
// arrive.
struct MultiWorkerMirroredStrategy::Comm {
  MPI_Comm comm = MPI_COMM_NULL;
  int size = 1;
  int rank = 0;
  int64_t sequence = 0;  // Collectives so far, for messages and tags.
  // Scratch kept between collectives: gradients of a large model are hundreds of MB, and fresh
  // buffers every step would cost page faults comparable to the transfer itself.
  std::vector<float> packed;
  // The other workers' parts of my chunk, as bytes: left uninitialised, and on huge pages from
  // 2 MiB on, since a first fill of hundreds of MB in 4 KiB pages costs more than a step. `parts`
  // serves the sums made at once; `scattered` holds those a reduce-scatter leaves to its caller,
  // until the next one.
  Tensor parts;
  Tensor scattered;
  // Whether every worker runs on this host and may share memory with the others.
  bool one_host = false;
  // Tensors moved by share_with_workers: one segment per worker in worker order, this worker's
  // written by it and the others' mapped to read. Kept alive by the tensors in them.
  struct SharedTensors {
    std::vector<internal::HostSharedMemory> segments;
  };
  std::vector<std::weak_ptr<SharedTensors>> shared;

  // `scratch` with room for `bytes`, grown and never shrunk: a step sums its small tensors before
  // its large ones, and a buffer shrunk for them would fault hundreds of MB in again when growing
  // back.
  static void* room(Tensor& scratch, int64_t bytes) {
    if (static_cast<int64_t>(scratch.byte_size()) < bytes) {
      scratch = Tensor::uninitialized(DType::kUInt8, Shape{bytes});
    }
    return scratch.raw_data();
  }

  void check(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return;
    g_abort_at_exit = true;
    throw Internal(str_cat("MultiWorkerMirroredStrategy worker ", rank, ": ", call,
                           " failed in collective #", sequence, ": ", mpi_error_text(rc)));
  }

  // Message tags: two per collective (its phases), below the MPI minimum of 32767.
  int tag() const { return 2 * static_cast<int>(sequence % 15000); }
  // Starts a collective: its number, for its tags and messages.
  void next_collective() { ++sequence; }

  // Requests in flight, each with the worker it talks to.
  struct Requests {
    std::vector<MPI_Request> requests;
    std::vector<int> peers;
  };

  // Polls the requests until all complete or the deadline passes. On timeout, cancels what is
  // left and throws Internal naming the workers that did not answer.
  void wait_all(Requests& pending, double timeout_seconds, std::string_view what) {
    std::vector<MPI_Request>& requests = pending.requests;
    const std::vector<int>& peers = pending.peers;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(timeout_seconds));
    std::vector<char> done(requests.size(), 0);
    size_t remaining = requests.size();
    int idle_polls = 0;
    constexpr auto kSpin = std::chrono::milliseconds(200);
    auto spin_until = Clock::now() + kSpin;
    while (remaining > 0) {
      bool progressed = false;
      for (size_t i = 0; i < requests.size(); ++i) {
        if (done[i]) continue;
        int flag = 0;
        check(MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE), "MPI_Test");
        if (flag) {
          done[i] = 1;
          --remaining;
          progressed = true;
        }
      }
      if (remaining == 0) break;
      if (Clock::now() > deadline) {
        std::set<int> missing_peers;
        for (size_t i = 0; i < requests.size(); ++i) {
          if (done[i]) continue;
          missing_peers.insert(peers[i]);
          MPI_Cancel(&requests[i]);
          MPI_Request_free(&requests[i]);
        }
        std::string missing;
        for (int peer : missing_peers) {
          missing += (missing.empty() ? "" : ", ") + std::to_string(peer);
        }
        g_abort_at_exit = true;
        throw Internal(str_cat("MultiWorkerMirroredStrategy worker ", rank, ": worker(s) ", missing,
                               " did not answer ", what, " (collective #", sequence, ") within ",
                               timeout_seconds,
                               " s; a worker died or stopped, stopping instead of waiting"));
      }
      // MPI moves a large message in fragments, only while it is being polled, so polling stays
      // tight for a while (a transfer of hundreds of MB between present workers completes within
      // it); past that the peer is busy or gone, and sleeps of up to 1 ms keep a waiting worker
      // from taking CPU time from a slower one (workers may share cores).
      if (progressed) {
        idle_polls = 0;
        spin_until = Clock::now() + kSpin;
      } else if (Clock::now() < spin_until) {
        std::this_thread::yield();
      } else {
        const int shift = std::min(++idle_polls, 7);
        std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000, 10 << shift)));
      }
    }
  }

  // The values of a collective cut into one chunk per worker, each whole blocks of `align`
  // values (the last one shorter).
  struct Chunks {
    int64_t count;
    int64_t align;
    int workers;

    int64_t begin(int c) const {
      const int64_t blocks = (count + align - 1) / align;
      return std::min(count, blocks * c / workers * align);
    }
    int64_t length(int c) const { return begin(c + 1) - begin(c); }
  };

  // Throws InvalidArgument when a chunk exceeds one MPI message.
  Chunks chunks(int64_t count, int64_t align, std::string_view what) const {
    const Chunks out{count, align, size};
    for (int c = 0; c < size; ++c) {
      if (out.length(c) > INT32_MAX) {
        throw InvalidArgument(str_cat(what, ": ", count, " values exceed the MPI message size"));
      }
    }
    return out;
  }

  // How a tensor of `elements` values is cut into the workers' shares (worker_share).
  Chunks shares(int64_t elements, std::string_view what) const {
    return chunks(elements, Strategy::kShareAlignment, what);
  }

  // When `data` lies in shared tensors: where each other worker's values of my share of the tensor
  // there are, mine standing as null.
  std::optional<WorkerParts<float>> parts_in_place(const float* data, const Chunks& cut) const {
    const auto address = reinterpret_cast<uintptr_t>(data);
    for (const std::weak_ptr<SharedTensors>& weak : shared) {
      const std::shared_ptr<SharedTensors> tensors = weak.lock();
      if (!tensors) continue;
      const internal::HostSharedMemory& own = tensors->segments[static_cast<size_t>(rank)];
      const auto begin = reinterpret_cast<uintptr_t>(own.data());
      if (address < begin || address >= begin + own.size()) continue;
      WorkerParts<float> parts(static_cast<size_t>(size), nullptr);
      for (int r = 0; r < size; ++r) {
        if (r == rank) continue;
        const char* theirs = tensors->segments[static_cast<size_t>(r)].data() + (address - begin);
        parts[static_cast<size_t>(r)] = reinterpret_cast<const float*>(theirs) + cut.begin(rank);
      }
      return parts;
    }
    return std::nullopt;
  }

  // Sums `count` values of `data` over the workers in worker order; every worker ends with the
  // same sums. The values are cut into one chunk per worker; worker c receives everyone's part of
  // chunk c, sums it in worker order (v0 + v1 + …) and sends the result to all: each element is
  // summed once, on one worker, so the result is bit-identical everywhere, while the traffic and
  // the additions are spread evenly over the workers (a reduce-scatter then an all-gather).
  template <class T>
  void sum(T* data, const Chunks& cut, MPI_Datatype type, double timeout, std::string_view what) {
    next_collective();
    scatter_sum(data, cut, type, timeout, what, 0);
    gather(data, cut, type, timeout, what, 1);
  }

  // The first half of sum(), as `phase` of the current collective: afterwards only my chunk of
  // `data` holds the sums.
  template <class T>
  void scatter_sum(T* data, const Chunks& cut, MPI_Datatype type, double timeout,
                   std::string_view what, int phase) {
    T* into = static_cast<T*>(room(parts, (size - 1) * cut.length(rank) * int64_t{sizeof(T)}));
    const WorkerParts<T> mine = scatter(data, into, cut, type, timeout, what, phase);
    add_in_worker_order(data + cut.begin(rank), mine, 0, cut.length(rank));
  }

  // The exchange of scatter_sum(), without the sum: the other workers' values of my chunk into
  // `into` ((size - 1) × my chunk's length), mine of theirs out. Returns where each worker's
  // values of my chunk are, mine standing as null.
  template <class T>
  WorkerParts<T> scatter(T* data, T* into, const Chunks& cut, MPI_Datatype type, double timeout,
                         std::string_view what, int phase) {
    const int64_t my_length = cut.length(rank);
    WorkerParts<T> mine(static_cast<size_t>(size), nullptr);
    Requests requests;
    for (int r = 0; r < size; ++r) {
      if (r == rank) continue;
      T* part = into + (r < rank ? r : r - 1) * my_length;
      mine[static_cast<size_t>(r)] = part;
      post(requests, false, part, my_length, type, r, phase);
      post(requests, true, data + cut.begin(r), cut.length(r), type, r, phase);
    }
    wait_all(requests, timeout, what);
    return mine;
  }

  // The second half of sum(), as `phase` of the current collective: my chunk of `data` to
  // everyone, theirs into place.
  template <class T>
  void gather(T* data, const Chunks& cut, MPI_Datatype type, double timeout, std::string_view what,
              int phase) {
    Requests requests;
    for (int r = 0; r < size; ++r) {
      if (r == rank) continue;
      post(requests, false, data + cut.begin(r), cut.length(r), type, r, phase);
      post(requests, true, data + cut.begin(rank), cut.length(rank), type, r, phase);
    }
    wait_all(requests, timeout, what);
  }

  // Returns once every worker has called it: an empty message to and from each, so that a worker
  // that does not come is named.
  void meet(double timeout, std::string_view what) {
    next_collective();
    Requests requests;
    for (int r = 0; r < size; ++r) {
      if (r == rank) continue;
      post(requests, false, nullptr, 0, MPI_BYTE, r, 0);
      post(requests, true, nullptr, 0, MPI_BYTE, r, 0);
    }
    wait_all(requests, timeout, what);
  }

  void post(Requests& to, bool send, void* buffer, int64_t n, MPI_Datatype type, int peer,
            int phase) {
    to.requests.emplace_back();
    to.peers.push_back(peer);
    if (send) {
      check(MPI_Isend(buffer, static_cast<int>(n), type, peer, tag() + phase, comm,
                      &to.requests.back()),
            "MPI_Isend");
    } else {
      check(MPI_Irecv(buffer, static_cast<int>(n), type, peer, tag() + phase, comm,
                      &to.requests.back()),
            "MPI_Irecv");
    }
  }

  void broadcast(char* data, int64_t bytes, double timeout) {
    next_collective();
    if (bytes > INT32_MAX) {
      throw InvalidArgument(str_cat("broadcast_from_chief: ", bytes, " bytes exceed one message"));
    }
    Requests requests;
    if (rank == 0) {
      for (int r = 1; r < size; ++r) post(requests, true, data, bytes, MPI_BYTE, r, 0);
    } else {
      post(requests, false, data, bytes, MPI_BYTE, 0, 0);
    }
    wait_all(requests, timeout, "broadcast_from_chief");
  }
};

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(const MultiWorkerOptions& options)
    : Strategy(options.local_replicas, options.threads),
      comm_(std::make_unique<Comm>()),
      timeout_seconds_(options.collective_timeout_seconds) {
  if (!(options.collective_timeout_seconds > 0)) {
    throw InvalidArgument(
        str_cat("MultiWorkerMirroredStrategy: collective timeout must be > 0 s, got ",
                options.collective_timeout_seconds));
  }
  ensure_mpi_initialised();
  // A communicator of our own, returning errors instead of aborting inside MPI, so a failure
  // becomes a sluice error naming the worker.
  comm_->check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_->comm), "MPI_Comm_dup");
  comm_->check(MPI_Comm_set_errhandler(comm_->comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  comm_->check(MPI_Comm_size(comm_->comm, &comm_->size), "MPI_Comm_size");
  comm_->check(MPI_Comm_rank(comm_->comm, &comm_->rank), "MPI_Comm_rank");
  if (comm_->size > 1 && options.share_memory_on_one_host) {
    MPI_Comm host = MPI_COMM_NULL;
    comm_->check(
        MPI_Comm_split_type(comm_->comm, MPI_COMM_TYPE_SHARED, comm_->rank, MPI_INFO_NULL, &host),
        "MPI_Comm_split_type");
    int on_host = 0;
    comm_->check(MPI_Comm_size(host, &on_host), "MPI_Comm_size");
    MPI_Comm_free(&host);
    comm_->one_host = on_host == comm_->size;
  }
  set_cluster(comm_->size, comm_->rank);
}

MultiWorkerMirroredStrategy::~MultiWorkerMirroredStrategy() {
  // Leaving because of an error: the other workers may be waiting in a collective with this one.
  if (std::uncaught_exceptions() > 0) g_abort_at_exit = true;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_->comm != MPI_COMM_NULL && !finalized && !g_abort_at_exit) MPI_Comm_free(&comm_->comm);
}

namespace {

// Tensors of at least this many elements are summed in place, without a copy, and divided into
// shares; the smaller ones are packed into one message, since per-message latency dominates for
// them, and always summed whole. Every worker makes the same split.
constexpr int64_t kInPlace = int64_t{1} << 18;

bool divided(int64_t elements) { return elements >= kInPlace; }

void check_float32(const std::vector<Tensor*>& tensors, std::string_view what) {
  for (const Tensor* t : tensors) {
    if (t->dtype() != DType::kFloat32) {
      throw InvalidArgument(
          str_cat(what, ": only float32 is reduced, got ", dtype_name(t->dtype())));
    }
  }
}

}  // namespace

void MultiWorkerMirroredStrategy::sum_undivided(const std::vector<Tensor*>& tensors,
                                                std::string_view what) {
  int64_t total = 0;
  for (const Tensor* t : tensors) total += t->num_elements();
  std::vector<float>& packed = comm_->packed;
  packed.clear();
  for (const Tensor* t : tensors) {
    if (divided(t->num_elements())) continue;
    const float* v = t->data<float>();
    packed.insert(packed.end(), v, v + t->num_elements());
  }
  // With nothing at all to sum, still one collective, so every worker counts it.
  if (packed.empty() && total > 0) return;
  comm_->sum(packed.data(), comm_->chunks(static_cast<int64_t>(packed.size()), 1, what), MPI_FLOAT,
             timeout_seconds_, what);
  int64_t offset = 0;
  for (Tensor* t : tensors) {
    if (divided(t->num_elements())) continue;
    std::memcpy(t->data<float>(), packed.data() + offset, t->byte_size());
    offset += t->num_elements();
  }
}

void MultiWorkerMirroredStrategy::all_reduce_across_workers(const std::vector<Tensor*>& tensors) {
  if (num_workers() == 1) return;
  constexpr std::string_view kWhat = "all_reduce_across_workers";
  check_float32(tensors, kWhat);
  sum_undivided(tensors, kWhat);
  for (Tensor* t : tensors) {
    if (!divided(t->num_elements())) continue;
    comm_->sum(t->data<float>(), comm_->shares(t->num_elements(), kWhat), MPI_FLOAT,
               timeout_seconds_, kWhat);
  }
}

std::vector<WorkerParts<float>> MultiWorkerMirroredStrategy::reduce_scatter_across_workers(
    const std::vector<Tensor*>& tensors) {
  std::vector<WorkerParts<float>> parts(tensors.size());
  if (num_workers() == 1) return parts;
  constexpr std::string_view kWhat = "reduce_scatter_across_workers";
  check_float32(tensors, kWhat);
  sum_undivided(tensors, kWhat);
  // The parts of shared tensors are where the other workers wrote them. Room for every other
  // divided tensor's parts at once: they are read after the last has arrived.
  std::vector<std::optional<Comm::Chunks>> cuts(tensors.size());
  int64_t floats = 0;
  bool in_place = false;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!divided(tensors[i]->num_elements())) continue;
    const Comm::Chunks cut = comm_->shares(tensors[i]->num_elements(), kWhat);
    if (std::optional<WorkerParts<float>> found =
            comm_->parts_in_place(tensors[i]->data<float>(), cut)) {
      parts[i] = std::move(*found);
      in_place = true;
      continue;
    }
    cuts[i] = cut;
    floats += (num_workers() - 1) * cut.length(worker_index());
  }
  // Every worker has arrived, so has written its tensors in full.
  if (in_place) comm_->meet(timeout_seconds_, kWhat);
  auto* into = static_cast<float*>(Comm::room(comm_->scattered, floats * int64_t{sizeof(float)}));
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!cuts[i]) continue;
    comm_->next_collective();
    parts[i] = comm_->scatter(tensors[i]->data<float>(), into, *cuts[i], MPI_FLOAT,
                              timeout_seconds_, kWhat, 0);
    into += (num_workers() - 1) * cuts[i]->length(worker_index());
  }
  return parts;
}

void MultiWorkerMirroredStrategy::all_gather_across_workers(const std::vector<Tensor*>& tensors) {
  if (num_workers() == 1) return;
  constexpr std::string_view kWhat = "all_gather_across_workers";
  check_float32(tensors, kWhat);
  for (Tensor* t : tensors) {
    if (!divided(t->num_elements())) continue;  // Every worker's whole share.
    comm_->next_collective();
    comm_->gather(t->data<float>(), comm_->shares(t->num_elements(), kWhat), MPI_FLOAT,
                  timeout_seconds_, kWhat, 0);
  }
}

ElementRange MultiWorkerMirroredStrategy::worker_share(int64_t elements) const {
  if (!divided(elements)) return {0, elements};
  const Comm::Chunks cut = comm_->shares(elements, "worker_share");
  return {cut.begin(worker_index()), cut.begin(worker_index() + 1)};
}

bool MultiWorkerMirroredStrategy::share_with_workers(const std::vector<Tensor*>& tensors) {
  if (!comm_->one_host) return false;
  check_float32(tensors, "share_with_workers");
  // Only divided tensors are read by other workers. One segment holds them all, each aligned as a
  // tensor's block is.
  std::vector<Tensor*> moving;
  std::vector<size_t> offsets;
  size_t bytes = 0;
  for (Tensor* t : tensors) {
    if (!divided(t->num_elements())) continue;
    moving.push_back(t);
    offsets.push_back(bytes);
    bytes += (t->byte_size() + internal::kBlockAlignment - 1) / internal::kBlockAlignment *
             internal::kBlockAlignment;
  }
  if (moving.empty()) return false;
  // The segments' names: the chief's process and a random number, unique on the host, then each
  // worker's index.
  std::array<char, 48> prefix{};
  if (is_chief()) {
    std::random_device random;
    std::snprintf(prefix.data(), prefix.size(), "/sluice-%d-%08x%08x", static_cast<int>(getpid()),
                  random(), random());
  }
  comm_->broadcast(prefix.data(), static_cast<int64_t>(prefix.size()), timeout_seconds_);
  const auto name = [&](size_t worker) { return str_cat(prefix.data(), "-", worker); };
  // Each worker makes its own segment, then maps the others': all share, or, if any of them
  // failed (a full /dev/shm), none does.
  const auto on_every_worker = [&](const auto& step) {
    bool failed = false;
    try {
      step();
    } catch (const Error&) {
      failed = true;
    }
    return !on_any_worker(failed);
  };
  auto shared = std::make_shared<Comm::SharedTensors>();
  std::vector<internal::HostSharedMemory>& segments = shared->segments;
  segments.resize(static_cast<size_t>(num_workers()));
  const auto me = static_cast<size_t>(worker_index());
  // The names go once every worker has mapped the segments or given up, and also when a worker
  // is lost on the way: nothing is left behind on the host.
  const auto unlink_own = [&] {
    if (segments[me].data()) internal::HostSharedMemory::unlink(name(me));
  };
  bool ok = false;
  try {
    ok = on_every_worker(
             [&] { segments[me] = internal::HostSharedMemory::create(name(me), bytes); }) &&
         on_every_worker([&] {
           for (size_t r = 0; r < segments.size(); ++r) {
             if (r != me) segments[r] = internal::HostSharedMemory::open(name(r), bytes);
           }
         });
  } catch (...) {
    unlink_own();
    throw;
  }
  unlink_own();
  if (!ok) return false;
  for (size_t i = 0; i < moving.size(); ++i) {
    char* place = segments[me].data() + offsets[i];
    std::memcpy(place, moving[i]->raw_data(), moving[i]->byte_size());
    *moving[i] = Tensor::from_external(DType::kFloat32, moving[i]->shape(), place, [shared] {});
  }
  std::erase_if(comm_->shared, [](const auto& weak) { return weak.expired(); });
  comm_->shared.push_back(shared);
  return true;
}

void MultiWorkerMirroredStrategy::all_reduce_across_workers(std::vector<double>& values) {
  if (num_workers() == 1) return;
  // Nothing to sum: Strategy::barrier.
  if (values.empty()) return comm_->meet(timeout_seconds_, "barrier");
  constexpr std::string_view kWhat = "all_reduce_across_workers";
  comm_->sum(values.data(), comm_->chunks(static_cast<int64_t>(values.size()), 1, kWhat),
             MPI_DOUBLE, timeout_seconds_, kWhat);
}

void MultiWorkerMirroredStrategy::broadcast_from_chief(const std::vector<Tensor*>& tensors) {
  if (num_workers() == 1) return;
  int64_t total = 0;
  for (const Tensor* t : tensors) {
    if (t->dtype() == DType::kString) {
      throw InvalidArgument("broadcast_from_chief: string tensors are not broadcast");
    }
    total += static_cast<int64_t>(t->byte_size());
  }
  // Not zeroed, and on huge pages: a model's weights are hundreds of MB.
  Tensor packed = Tensor::uninitialized(DType::kUInt8, Shape{total});
  char* bytes = static_cast<char*>(packed.raw_data());
  int64_t offset = 0;
  for (const Tensor* t : tensors) {
    std::memcpy(bytes + offset, t->raw_data(), t->byte_size());
    offset += static_cast<int64_t>(t->byte_size());
  }
  comm_->broadcast(bytes, total, timeout_seconds_);
  offset = 0;
  for (Tensor* t : tensors) {
    std::memcpy(t->raw_data(), bytes + offset, t->byte_size());
    offset += static_cast<int64_t>(t->byte_size());
  }
}

}  // namespace sluice
