// JSON of pipe groups (`table --pipes`): the basis and seed matrix of the document, and each row's
// verdicts against the basis; and reading both back (`table --resume`, `compare`).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "peakprobe/expected.hpp"
#include "peakprobe/pipe_result.hpp"

namespace peakprobe {

nlohmann::json to_json(const PipeGroups& g);
nlohmann::json pipe_verdicts_json(const std::vector<PipeVerdict>& verdicts);

// doc["pipe_groups"] as to_json wrote it; an error names what is missing or mistyped.
Expected<PipeGroups> pipe_groups_from_json(const nlohmann::json& j);
// A row's "pipes" array; entries that are not objects or name no basis are left out.
std::vector<PipeVerdict> pipe_verdicts_from_json(const nlohmann::json& a);
// "none", "partial", ... back to the enum; nullopt for any other text.
std::optional<Contention> contention_from(const std::string& text);

// The compact reading of one form's verdicts, for consoles and cells: "shares A; partial B", "none"
// when it contends with no member, "-" when nothing was judged.
std::string pipe_summary(const std::vector<PipeVerdict>& verdicts);

}  // namespace peakprobe
