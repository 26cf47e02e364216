// Status names as they appear in every output format (JSON, CSV, Markdown, console).
#include "peakprobe/result.hpp"

namespace peakprobe {

const char* to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::skipped: return "skipped";
    case Status::mistrusted: return "mistrusted";
    case Status::error: return "error";
  }
  // Only reachable through a value cast into the enum; say so instead of crashing a report.
  return "unknown";
}

}  // namespace peakprobe
