// Forms that touch state the harness itself stands on: the stack pointer, the direction flag, the
// loop counter and buffer registers, the process's own existence. Some are measured in a balanced
// sequence with a companion that undoes their effect (push with pop, std with cld, as uops.info
// does); the rest are refused before anything runs, with the reason.
#pragma once
#include <optional>
#include <string>

#include "asm/probe_form.hpp"
#include "asm/x86/inst_form.hpp"

namespace peakprobe::x86 {

using isa::Companion;  // "pop r64" after each "push r64"

// The companion that keeps the stream balanced, or nullopt when the form needs none.
std::optional<Companion> balancing_companion(const InstForm& f);

// Why the form cannot be measured in user space (leaves the process, needs privileges, moves a
// register the harness reserves without a way to balance it), or nullopt when it can.
std::optional<std::string> refusal_reason(const InstForm& f);

}  // namespace peakprobe::x86
