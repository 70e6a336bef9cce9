// Provenance of a result set: everything about the machine, kernel and build that changes what a
// wakeup costs (docs/result-set.md#environment), and the warnings that tell a human what makes
// this run's figures noisy and how to fix it. The capture, which reads the running system, is
// common/system/environment_capture.h's; everything here reads only its arguments.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX (openssl/types.h)

namespace wb {

// One line per thing in `env` that makes wakeup timings noisy, each with its fix. Reads only the
// JSON, so fixtures and fabricated environments test it.
std::vector<std::string> environment_warnings(const nlohmann::json& env);

// Hypervisor detection from the evidence a Linux guest exposes. Every input is optional (empty =
// not readable or not applicable on this architecture).
struct HypervisorEvidence {
  std::string sys_hypervisor_type;       // /sys/hypervisor/type ("xen", ...)
  bool cpuinfo_hypervisor_flag = false;  // x86 CPUID.1:ECX[31], the "hypervisor" flag
  std::string cpuid_vendor;              // x86 CPUID leaf 0x40000000 signature ("KVMKVMKVM", ...)
  std::string dmi_sys_vendor;            // /sys/class/dmi/id/sys_vendor
  std::string dmi_product_name;          // /sys/class/dmi/id/product_name
  std::string ppc_platform;              // powerpc cpuinfo "platform" ("pSeries" = LPAR/guest)
  std::string ppc_machine;               // powerpc cpuinfo "machine"
  std::string device_tree_hypervisor;    // /proc/device-tree/hypervisor/compatible (arm64, ppc)
};
// {"detected": bool, "vendor": "KVM" | ... | null, "evidence": ["...", ...]}
nlohmann::json detect_hypervisor(const HypervisorEvidence& ev);

// {"version", "git_sha", "compiler"} of this wakebench build (environment.wakebench).
nlohmann::json wakebench_build();

// SHA-256 of `data` (FIPS 180-4) as 64 lowercase hex digits, computed by OpenSSL's libcrypto.
std::string sha256_hex(std::string_view data);

// The same digest of data given in pieces (a file written as it grows): update() with each piece
// in order, then hex() once. Throws std::runtime_error when libcrypto fails.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view data);
  std::string hex();

 private:
  evp_md_ctx_st* ctx_;
};

}  // namespace wb
