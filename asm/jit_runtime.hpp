// The process-wide JIT runtime every ISA's emitter adds its code to (asmjit's JitRuntime is the same
// for every architecture). Included by asm/<isa>/ only: src/ sees asm/jit.hpp.
#pragma once
#include <asmjit/core.h>

#include <string>

#include "asm/jit.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::isa {

// Records the first error an emitter reports while it writes into `code` (set on construction, for
// the holder's life). Without a handler asmjit drops an instruction it cannot encode and goes on:
// an AArch64 kernel's load whose offset no form encodes vanished, and the kernel would have
// computed wrong sums. add_to_runtime refuses code whose handler recorded one.
class EmitErrors final : public asmjit::ErrorHandler {
 public:
  EmitErrors() = default;  // set by hand (HostCode)
  explicit EmitErrors(asmjit::CodeHolder& code) { code.setErrorHandler(this); }
  void handleError(asmjit::Error err, const char* message, asmjit::BaseEmitter*) override {
    if (error_ != asmjit::kErrorOk) return;
    error_ = err;
    message_ = message ? message : asmjit::DebugUtils::errorAsString(err);
  }
  bool failed() const { return error_ != asmjit::kErrorOk; }
  const std::string& message() const { return message_; }

 private:
  asmjit::Error error_ = asmjit::kErrorOk;
  std::string message_;
};

// Adds finished code to the runtime (thread-safe). An error: code whose EmitErrors recorded one,
// and code with no EmitErrors set (whether asmjit dropped an instruction would not be known).
Expected<JitFunction> add_to_runtime(asmjit::CodeHolder& code);
// The environment code must be generated for: the host's.
const asmjit::Environment& jit_environment();

// What every code generator starts from: a CodeHolder for the host's environment with an
// EmitErrors set for its life and, where `listing` is given, a logger that writes the listing
// there once the code is added. One place, so that no generator goes without the handler.
class HostCode {
 public:
  explicit HostCode(std::string* listing = nullptr) : listing_(listing) {
    code_.init(jit_environment());
    code_.setErrorHandler(&errors_);
    if (listing_) code_.setLogger(&logger_);
  }
  HostCode(const HostCode&) = delete;
  HostCode& operator=(const HostCode&) = delete;
  asmjit::CodeHolder* holder() { return &code_; }
  // Adds the code to the runtime (add_to_runtime) and then writes the listing, if one was asked for.
  Expected<JitFunction> finish() {
    auto fn = add_to_runtime(code_);
    if (fn && listing_) *listing_ = logger_.data();
    return fn;
  }

 private:
  std::string* listing_;
  EmitErrors errors_;
  asmjit::StringLogger logger_;
  asmjit::CodeHolder code_;  // last: destroyed first, while its handler and logger still live
};

}  // namespace peakprobe::isa
