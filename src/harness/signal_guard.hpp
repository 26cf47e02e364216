// Runs generated code so that a fault (SIGILL, SIGSEGV, SIGBUS, SIGFPE) becomes an error result
// instead of a crash. Feature checks come first; this is the second line of defence.
#pragma once
#include <functional>
#include <string>

namespace peakprobe {

// Returns true when `body` ran to completion; otherwise false with the signal named in `error`.
// Guards nest: a fault after an inner guard has returned is the outer one's.
bool run_guarded(const std::function<void()>& body, std::string& error);

// True when `error` (from run_guarded, possibly with a prefix) names an illegal-instruction fault.
bool is_illegal_instruction(const std::string& error);

}  // namespace peakprobe
