// oneDNN / OpenBLAS / BLIS through dlopen: candidate lists, symbol lookup, thread control and the
// GEMM entry points.
#include "matmul/blas_baseline.hpp"
#include "util/text.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace peakprobe {

namespace {

// cblas_sgemm with Debian's 32-bit blasint; enums as their CBLAS values.
using SgemmFn = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                         int lda, const float* b, int ldb, float beta, float* c, int ldc);
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;

using OpenblasSetThreads = void (*)(int);
using OpenblasGetThreads = int (*)();
using OpenblasString = char* (*)();
// BLIS takes and returns dim_t (64-bit in Debian's build). Results are read through their low 32 bits
// only, which is right whether the build's dim_t/gint_t is 32 or 64 bits wide.
using BlisSetThreads = void (*)(long);
using BlisGetThreads = long (*)();
using BlisString = char* (*)();
using BlisArchQuery = int (*)();
using BlisArchString = char* (*)(int);
using BlisFlag = long (*)();

// oneDNN's BLAS-like functions (dnnl.h): row-major, 'N'/'T' transposes, 64-bit dnnl_dim_t, a
// dnnl_status_t (0 = success) back.
using DnnlSgemm = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
using DnnlGemmBf16 = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
                             const uint16_t* a, int64_t lda, const uint16_t* b, int64_t ldb, float beta, float* c,
                             int64_t ldc);
using DnnlGemmU8S8 = int (*)(char transa, char transb, char offsetc, int64_t m, int64_t n, int64_t k, float alpha,
                             const uint8_t* a, int64_t lda, uint8_t ao, const int8_t* b, int64_t ldb, int8_t bo,
                             float beta, int32_t* c, int64_t ldc, const int32_t* co);
// dnnl_version_t; cpu_runtime is DNNL_RUNTIME_SEQ (1), _OMP (2), _TBB (4) or _THREADPOOL (8).
struct DnnlVersion {
  int major, minor, patch;
  const char* hash;
  unsigned cpu_runtime, gpu_runtime;
};
using DnnlVersionFn = const DnnlVersion* (*)();
using DnnlSetMaxIsa = int (*)(int isa);
using DnnlGetIsa = int (*)();
constexpr unsigned kDnnlRuntimeSeq = 1, kDnnlRuntimeOmp = 2, kDnnlRuntimeTbb = 4, kDnnlRuntimeThreadpool = 8;

struct KnownLibrary {
  const char* name;     // "openblas"
  const char* display;  // "OpenBLAS"
  const char* package;  // Debian package that provides it
  const char* symbol;   // the f32 GEMM it must export
  std::vector<std::string> sonames;
  std::vector<std::string> variant_dirs;  // under the multiarch library directory
  const char* file;                       // file name inside those variant dirs
};

const std::vector<KnownLibrary>& known_libraries() {
  static const std::vector<KnownLibrary> known = {
      {"onednn", "oneDNN", "libdnnl2", "dnnl_sgemm", {"libdnnl.so.3", "libdnnl.so.2"}, {}, ""},
      {"openblas", "OpenBLAS", "libopenblas0-pthread", "cblas_sgemm", {"libopenblas.so.0"},
       {"openblas-pthread", "openblas-openmp", "openblas-serial"}, "libopenblas.so.0"},
      {"blis", "BLIS", "libblis4-pthread", "cblas_sgemm", {"libblis.so.4", "libblis.so.3"},
       {"blis-pthread", "blis-openmp", "blis-serial"}, "libblis.so.4"},
  };
  return known;
}

std::string package_hint() {
  std::string s;
  for (const auto& k : known_libraries()) {
    if (!s.empty()) s += ", ";
    s += std::string(k.display) + ": Debian package " + k.package;
  }
  return s;
}

std::string real_path(const std::string& p) {
  if (char* r = ::realpath(p.c_str(), nullptr)) {
    std::string out(r);
    std::free(r);
    return out;
  }
  return p;
}

std::string parent_dir(const std::string& p) {
  const auto slash = p.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string() : p.substr(0, slash);
}

// The multiarch library directories to search for Debian's variant subdirectories: the one this
// binary was built for (the build's multiarch tuple), and the one the running libc was loaded from (the same on Debian and Ubuntu;
// it covers a differently laid out system). Deduplicated by real path, first spelling kept.
std::vector<std::string> multiarch_dirs() {
  std::vector<std::string> dirs, seen;
  auto add = [&](const std::string& d) {
    if (d.empty()) return;
    const std::string r = real_path(d);
    if (std::find(seen.begin(), seen.end(), r) != seen.end()) return;
    seen.push_back(r);
    dirs.push_back(d);
  };
  // CMake's CMAKE_LIBRARY_ARCHITECTURE of the build (the multiarch tuple, right for cross builds).
#ifdef PEAKPROBE_LIBRARY_ARCHITECTURE
  if (std::string tuple = PEAKPROBE_LIBRARY_ARCHITECTURE; !tuple.empty()) add("/usr/lib/" + tuple);
#endif
  if (void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD)) {
    struct link_map* lm = nullptr;
    if (dlinfo(libc, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0] == '/')
      add(parent_dir(lm->l_name));
    dlclose(libc);
  }
  return dirs;
}

std::vector<std::string> candidates_for(const KnownLibrary& lib) {
  std::vector<std::string> out(lib.sonames.begin(), lib.sonames.end());
  for (const auto& dir : multiarch_dirs())
    for (const auto& variant : lib.variant_dirs) out.push_back(dir + "/" + variant + "/" + lib.file);
  return out;
}

// dlerror() without the "FILE: " prefix it usually starts with.
std::string dl_reason(const std::string& file) {
  const char* e = dlerror();
  std::string s = e ? e : "unknown dlopen error";
  if (s.rfind(file + ": ", 0) == 0) s.erase(0, file.size() + 2);
  if (s == "cannot open shared object file: No such file or directory") return "not found";
  return s;
}

std::string file_name(const std::string& p) {
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// The OpenMP runtime a loaded library runs on, already in the process (RTLD_NOLOAD): its
// omp_set_num_threads and omp_get_max_threads, or nulls.
std::pair<void*, void*> loaded_openmp() {
  for (const char* so : {"libgomp.so.1", "libomp.so.5", "libomp.so", "libiomp5.so"}) {
    void* h = dlopen(so, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h) continue;
    void* set = dlsym(h, "omp_set_num_threads");
    void* get = dlsym(h, "omp_get_max_threads");
    dlclose(h);  // the library that loaded it keeps it mapped
    if (set) return {set, get};
  }
  return {nullptr, nullptr};
}

}  // namespace

// dnnl_status_t values as dnnl_types.h names them.
std::string dnnl_status_text(int status) {
  static const char* const names[] = {"success",  "out of memory", "invalid arguments", "unimplemented",
                                      "iterator ends", "runtime error", "not required"};
  return fmt::format("{} (status {})", status >= 0 && status < 7 ? names[status] : "unknown status", status);
}

Expected<std::unique_ptr<BlasLibrary>> BlasLibrary::open(const std::string& name, const isa::LibraryIsaLimit& limit) {
  const KnownLibrary* known = nullptr;
  for (const auto& k : known_libraries())
    if (name == k.name) known = &k;
  const bool is_path = name.find('/') != std::string::npos;
  const bool is_soname = !is_path && name.find(".so") != std::string::npos;
  if (!known && !is_path && !is_soname) {
    std::string names;
    for (const auto& k : known_libraries()) names += std::string(names.empty() ? "" : ", ") + k.name;
    return make_error("unknown BLAS library \"" + name + "\": known names are " + names +
                      " (or give the path of a shared library that exports cblas_sgemm)");
  }
  if (is_path) {
    struct stat st {};
    if (::stat(name.c_str(), &st) != 0) {
      const std::string why = errno == ENOENT || errno == ENOTDIR ? "does not exist" : std::strerror(errno);
      return make_error("BLAS library " + name + ": " + why + " (tried " + name + "; " + package_hint() + ")");
    }
  }

  // Read by OpenBLAS's constructor: it must be in the environment before the library is loaded.
  if (known && std::strcmp(known->name, "openblas") == 0 && !limit.openblas_coretype.empty())
    ::setenv("OPENBLAS_CORETYPE", limit.openblas_coretype.c_str(), 1);
  const std::vector<std::string> candidates = known ? candidates_for(*known) : std::vector<std::string>{name};
  std::string tried;
  for (const auto& file : candidates) {
    if (!tried.empty()) tried += ", ";
    tried += file;
    dlerror();
    // RTLD_NODELETE: never unmapped, even when rejected below; once its constructors have run, a BLAS
    // may have started threads or registered handlers that call into it until the process exits.
    void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle) {
      tried += " (" + dl_reason(file) + ")";
      continue;
    }
    // A known library must export its own entry point; a file given by name may be either kind.
    void* sym = nullptr;
    bool dnnl = false;
    if (!known || std::strcmp(known->symbol, "cblas_sgemm") == 0) sym = dlsym(handle, "cblas_sgemm");
    if (!sym && (!known || std::strcmp(known->symbol, "dnnl_sgemm") == 0)) {
      sym = dlsym(handle, "dnnl_sgemm");
      dnnl = sym != nullptr;
    }
    if (!sym) {
      tried += known ? std::string(" (loads, but has no ") + known->symbol + ")"
                     : " (loads, but has no cblas_sgemm or dnnl_sgemm)";
      dlclose(handle);
      continue;
    }

    std::unique_ptr<BlasLibrary> lib(new BlasLibrary());
    lib->handle_ = handle;
    lib->sgemm_ = sym;
    lib->dnnl_ = dnnl;
    // The file that really defines cblas_sgemm (it may be a dependency of the one named), symlinks
    // resolved; the link map's name of the opened object as a fallback.
    Dl_info info{};
    if (dladdr(sym, &info) != 0 && info.dli_fname && info.dli_fname[0] != '\0') {
      lib->path_ = real_path(info.dli_fname);
    } else {
      struct link_map* lm = nullptr;
      if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0] != '\0')
        lib->path_ = real_path(lm->l_name);
      else
        lib->path_ = real_path(file);
    }

    if (dnnl) {
      lib->name_ = "onednn";
      lib->gemm_bf16_ = dlsym(handle, "dnnl_gemm_bf16bf16f32");
      lib->gemm_u8s8_ = dlsym(handle, "dnnl_gemm_u8s8s32");
      unsigned runtime = 0;
      if (void* ver = dlsym(handle, "dnnl_version"))
        if (const DnnlVersion* v = reinterpret_cast<DnnlVersionFn>(ver)()) {
          runtime = v->cpu_runtime;
          const char* rt = runtime == kDnnlRuntimeOmp   ? " OpenMP"
                           : runtime == kDnnlRuntimeSeq ? " sequential"
                           : runtime == kDnnlRuntimeTbb ? " TBB"
                           : runtime == kDnnlRuntimeThreadpool ? " threadpool"
                                                                : "";
          lib->version_ = fmt::format("oneDNN {}.{}.{}{}", v->major, v->minor, v->patch, rt);
        }
      if (runtime == kDnnlRuntimeOmp) {
        auto [set, get] = loaded_openmp();
        if (set) lib->set_threads_ = set, lib->get_threads_ = get, lib->set_threads_kind_ = 1;
      } else if (runtime == kDnnlRuntimeSeq) {
        lib->set_threads_kind_ = 3;
      }
      if (known) lib->name_ = known->name;
      return lib;
    }

    void* ob_set = dlsym(handle, "openblas_set_num_threads");
    void* ob_config = dlsym(handle, "openblas_get_config");
    void* bli_set = dlsym(handle, "bli_thread_set_num_threads");
    void* bli_version = dlsym(handle, "bli_info_get_version_str");
    const bool openblas = ob_set || ob_config || dlsym(handle, "openblas_get_corename");
    const bool blis = !openblas && (bli_set || bli_version);
    if (openblas) {
      lib->name_ = "openblas";
      if (ob_set) {
        lib->set_threads_ = ob_set;
        lib->get_threads_ = dlsym(handle, "openblas_get_num_threads");
        lib->set_threads_kind_ = 1;
      }
      std::string v;
      if (ob_config)
        if (const char* s = reinterpret_cast<OpenblasString>(ob_config)()) v = trim(s);
      if (void* core = dlsym(handle, "openblas_get_corename"))
        if (const char* s = reinterpret_cast<OpenblasString>(core)()) {
          const std::string c = trim(s);
          if (!c.empty() && !contains_nocase(v, c)) v += (v.empty() ? "OpenBLAS " : " ") + c;
        }
      lib->version_ = v;
    } else if (blis) {
      lib->name_ = "blis";
      if (bli_set) {
        lib->set_threads_ = bli_set;
        lib->get_threads_ = dlsym(handle, "bli_thread_get_num_threads");
        lib->set_threads_kind_ = 2;
      }
      std::string v;
      if (bli_version)
        if (const char* s = reinterpret_cast<BlisString>(bli_version)()) v = "BLIS " + trim(s);
      void* query = dlsym(handle, "bli_arch_query_id");
      void* arch = dlsym(handle, "bli_arch_string");
      if (!v.empty() && query && arch)
        if (const char* s = reinterpret_cast<BlisArchString>(arch)(reinterpret_cast<BlisArchQuery>(query)()))
          if (!trim(s).empty()) v += " " + trim(s);
      if (!v.empty()) {
        const auto flag = [&](const char* sym_name) {
          void* f = dlsym(handle, sym_name);
          return f && static_cast<int>(reinterpret_cast<BlisFlag>(f)()) != 0;
        };
        if (flag("bli_info_get_enable_pthreads"))
          v += " pthreads";
        else if (flag("bli_info_get_enable_openmp"))
          v += " openmp";
      }
      lib->version_ = v;
    } else {
      lib->name_ = file_name(name);
    }
    if (known) lib->name_ = known->name;  // what was asked for, whatever the symbols suggest
    return lib;
  }

  if (known)
    return make_error(std::string(known->display) + " not found: tried " + tried +
                      "; install the Debian package " + known->package);
  if (tried.find("has no cblas_sgemm") != std::string::npos)
    return make_error(name + " has no cblas_sgemm or dnnl_sgemm: not a CBLAS library or oneDNN (" + package_hint() +
                      ")");
  return make_error("cannot load BLAS library " + name + ": tried " + tried + " (" + package_hint() + ")");
}

BlasLibrary::~BlasLibrary() {
  if (handle_) dlclose(handle_);  // drops the reference only: RTLD_NODELETE keeps it mapped
}

std::string BlasLibrary::hold_to(const isa::LibraryIsaLimit& limit) {
  if (limit.level.empty()) return "";
  const std::string level = limit.level;
  if (dnnl_) {
    void* set = dlsym(handle_, "dnnl_set_max_cpu_isa");
    if (!set || limit.onednn_max_isa == 0)
      return fmt::format("cannot hold oneDNN to {}: {}", level, set ? "no oneDNN ISA for that level" : "no dnnl_set_max_cpu_isa");
    if (const int status = reinterpret_cast<DnnlSetMaxIsa>(set)(limit.onednn_max_isa); status != 0)
      return fmt::format("cannot hold oneDNN to {}: dnnl_set_max_cpu_isa: {}", level, dnnl_status_text(status));
    // dnnl_cpu_isa_t values are bit sets: the ISA in use must hold no bit the limit lacks.
    if (void* get = dlsym(handle_, "dnnl_get_effective_cpu_isa")) {
      const int effective = reinterpret_cast<DnnlGetIsa>(get)();
      if ((effective & ~limit.onednn_max_isa) != 0)
        return fmt::format("oneDNN still runs ISA {:#x} after dnnl_set_max_cpu_isa({:#x})", effective,
                           limit.onednn_max_isa);
    }
    version_ += (version_.empty() ? "oneDNN" : ",") + std::string(" max ISA ") + level;
    return "";
  }
  if (limit.onednn_only) return "";
  if (name_ == "openblas") {
    void* core = dlsym(handle_, "openblas_get_corename");
    const char* s = core ? reinterpret_cast<OpenblasString>(core)() : nullptr;
    const std::string picked = s ? trim(s) : "";
    if (limit.openblas_coretype.empty() || !contains_nocase(picked, limit.openblas_coretype) ||
        picked.size() != limit.openblas_coretype.size())
      return fmt::format("cannot hold OpenBLAS to {}: it runs its {} kernels (OPENBLAS_CORETYPE={} is obeyed by "
                         "DYNAMIC_ARCH builds only)",
                         level, picked.empty() ? "unknown" : picked, limit.openblas_coretype);
    return "";
  }
  if (name_ == "blis") {
    void* query = dlsym(handle_, "bli_arch_query_id");
    void* arch = dlsym(handle_, "bli_arch_string");
    const char* s = query && arch ? reinterpret_cast<BlisArchString>(arch)(reinterpret_cast<BlisArchQuery>(query)())
                                  : nullptr;
    const std::string picked = s ? trim(s) : "";
    if (std::find(limit.blis_configs.begin(), limit.blis_configs.end(), picked) == limit.blis_configs.end())
      return fmt::format("cannot hold BLIS to {}: it picked its {} configuration by itself, and this BLIS has no "
                         "switch to choose another",
                         level, picked.empty() ? "unknown" : picked);
    return "";
  }
  return fmt::format("cannot hold {} to {}: peakprobe knows the ISA switches of oneDNN, OpenBLAS and BLIS only", name_,
                     level);
}

bool BlasLibrary::set_threads(int threads) {
  if (threads < 1) return false;
  if (set_threads_kind_ == 3) return threads == 1;
  if (!set_threads_) return false;
  if (set_threads_kind_ == 1) {
    reinterpret_cast<OpenblasSetThreads>(set_threads_)(threads);
    if (get_threads_) return reinterpret_cast<OpenblasGetThreads>(get_threads_)() == threads;
    return true;
  }
  if (set_threads_kind_ == 2) {
    reinterpret_cast<BlisSetThreads>(set_threads_)(long(threads));
    if (get_threads_) return static_cast<int>(reinterpret_cast<BlisGetThreads>(get_threads_)()) == threads;
    return true;
  }
  return false;
}

bool BlasLibrary::sgemm_args_ok(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  auto in_range = [](int64_t v, int64_t lo) { return v >= lo && v <= kMaxDim; };
  return in_range(m, 0) && in_range(n, 0) && in_range(k, 0) && in_range(lda, std::max<int64_t>(1, k)) &&
         in_range(ldb, std::max<int64_t>(1, n)) && in_range(ldc, std::max<int64_t>(1, n));
}

void BlasLibrary::sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                        float* c, int64_t ldc) const {
  if (!sgemm_args_ok(m, n, k, lda, ldb, ldc)) {
    std::fprintf(stderr,
                 "peakprobe: internal error: %s sgemm called with m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld "
                 "(dimensions must be 0..%d, lda >= k, ldb and ldc >= n)\n",
                 name_.c_str(), (long long)m, (long long)n, (long long)k, (long long)lda, (long long)ldb,
                 (long long)ldc, INT32_MAX);
    std::abort();
  }
  if (dnnl_) {
    // oneDNN reports failure as a status; sgemm() has no way to say so but the stale C it leaves.
    (void)gemm(MatmulDtype::f32, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  reinterpret_cast<SgemmFn>(sgemm_)(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, int(m), int(n), int(k), 1.0f, a,
                                    int(lda), b, int(ldb), 0.0f, c, int(ldc));
}

bool BlasLibrary::supports(MatmulDtype dtype) const {
  switch (dtype) {
    case MatmulDtype::f32: return true;
    case MatmulDtype::bf16: return gemm_bf16_ != nullptr;
    case MatmulDtype::i8: return gemm_u8s8_ != nullptr;
  }
  return false;
}

Expected<bool> BlasLibrary::gemm(MatmulDtype dtype, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                                 const void* b, int64_t ldb, void* c, int64_t ldc) const {
  if (!supports(dtype))
    return make_error(fmt::format("{} has no {} GEMM", name_, to_string(dtype)));
  if (!dnnl_) {
    sgemm(m, n, k, static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb, static_cast<float*>(c), ldc);
    return true;
  }
  if (!sgemm_args_ok(m, n, k, lda, ldb, ldc))
    return make_error(fmt::format("{} GEMM arguments out of range: m={} n={} k={} lda={} ldb={} ldc={}", name_, m, n,
                                  k, lda, ldb, ldc));
  int status = 0;
  const char* fn = "";
  switch (dtype) {
    case MatmulDtype::f32:
      fn = "dnnl_sgemm";
      status = reinterpret_cast<DnnlSgemm>(sgemm_)('N', 'N', m, n, k, 1.0f, static_cast<const float*>(a), lda,
                                                   static_cast<const float*>(b), ldb, 0.0f, static_cast<float*>(c),
                                                   ldc);
      break;
    case MatmulDtype::bf16:
      fn = "dnnl_gemm_bf16bf16f32";
      status = reinterpret_cast<DnnlGemmBf16>(gemm_bf16_)('N', 'N', m, n, k, 1.0f, static_cast<const uint16_t*>(a),
                                                          lda, static_cast<const uint16_t*>(b), ldb, 0.0f,
                                                          static_cast<float*>(c), ldc);
      break;
    case MatmulDtype::i8: {
      const int32_t no_offset = 0;
      fn = "dnnl_gemm_u8s8s32";
      status = reinterpret_cast<DnnlGemmU8S8>(gemm_u8s8_)('N', 'N', 'F', m, n, k, 1.0f,
                                                          static_cast<const uint8_t*>(a), lda, 0,
                                                          static_cast<const int8_t*>(b), ldb, 0, 0.0f,
                                                          static_cast<int32_t*>(c), ldc, &no_offset);
      break;
    }
  }
  if (status != 0) {
    return make_error(fmt::format("{}: {}{}", fn, dnnl_status_text(status),
                                  status == 3 ? ": oneDNN has no kernel for it on this CPU" : ""));
  }
  return true;
}

std::vector<std::string> default_blas_names() {
  std::vector<std::string> names;
  for (const auto& k : known_libraries()) names.push_back(k.name);
  return names;
}

}  // namespace peakprobe
