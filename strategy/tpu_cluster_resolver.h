// TPUClusterResolver: finds the TPU system a TPUStrategy runs on, as
// tf.distribute.cluster_resolver.TPUClusterResolver. sluice has no TPU driver: every address
// resolves to the local host, whose CPU threads simulate a system of N TPU cores.
//
//   TPUClusterResolver resolver;            // TPU_NAME from the environment, else "local"
//   TPUClusterResolver resolver("local:4"); // a local system of 4 cores
//   TPUStrategy strategy(resolver);
#pragma once

#include <string>

namespace sluice {

class TPUClusterResolver {
 public:
  // The number of cores when the address does not choose one: a v2-8 / v3-8 board.
  static constexpr int kDefaultCores = 8;

  // `tpu` is what the tutorials pass: "" (then the TPU_NAME environment variable, and "local"
  // when that is unset or empty), "local", "local:N" (N >= 1 cores), a gRPC address
  // ("grpc://10.240.1.2:8470", as Colab's 'grpc://' + COLAB_TPU_ADDR) or a Cloud TPU name
  // ("my-tpu"). All of them resolve to this host. Without "local:N" the core count comes from the
  // SLUICE_TPU_CORES environment variable when set, else kDefaultCores. Throws InvalidArgument for
  // a malformed "local:N", a core count < 1, or an address with characters that no TPU name or
  // address has (spaces, control characters).
  explicit TPUClusterResolver(std::string tpu = "");

  // The address as resolved: the argument, or TPU_NAME's value, or "local".
  const std::string& tpu() const { return tpu_; }
  // The session target TensorFlow would connect to: the gRPC address for a "grpc://" address, ""
  // for everything that runs in this process (as TensorFlow's master() for a local TPU).
  std::string master() const;
  // TPU cores of the resolved system (TensorFlow's num_accelerators()["TPU"]).
  int num_accelerators() const { return cores_; }
  // Always "localhost": the machine whose CPU threads simulate the cores.
  std::string host() const { return "localhost"; }

 private:
  std::string tpu_;
  int cores_ = kDefaultCores;
};

}  // namespace sluice
