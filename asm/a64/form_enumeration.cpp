#include "asm/a64/form_enumeration.hpp"

#include <map>
#include <set>

#include "asm/a64/inst_form.hpp"

namespace peakprobe::a64 {
namespace {

// Operand signatures tried for every mnemonic ("%" is replaced by the mnemonic).
std::vector<std::string> signatures() {
  std::vector<std::string> s = {
      "%", "% x", "% x, x", "% w, w", "% x, x, x", "% w, w, w", "% x, x, #imm", "% w, w, #imm", "% x, #imm",
      "% w, #imm", "% x, x, x, x", "% w, w, w, w", "% x, w, w, x", "% x, w, w", "% x, w", "% w, w, x",
      "% x, x, x, lsl #imm", "% w, w, w, lsl #imm", "% x, x, #imm, #imm", "% w, w, #imm, #imm", "% x, x, x, ne",
      "% w, w, w, ne", "% x, x, x, #imm", "% x, x, ne", "% x, x, #imm, ne"};
  const char* fp[] = {"h", "s", "d"};
  for (const char* t : fp) {
    const std::string r(t);
    for (const char* f : {"% R, R, R", "% R, R", "% R, R, R, R", "% R, #imm", "% R, R, #imm", "% R, R, R, ne"}) {
      std::string x(f);
      for (size_t p; (p = x.find('R')) != std::string::npos;) x.replace(p, 1, r);
      s.push_back(x);
    }
  }
  for (const char* pair : {"s, d", "d, s", "h, s", "s, h", "d, h", "h, d", "w, s", "x, s", "w, d", "x, d", "s, w",
                           "s, x", "d, w", "d, x", "w, h", "x, h", "h, w", "h, x", "s, s, #imm", "d, d, #imm",
                           "b, b, b", "q, q, v.4s", "q, s, v.4s", "s, s"})
    s.push_back(std::string("% ") + pair);
  const char* arrs[] = {"8b", "16b", "4h", "8h", "2s", "4s", "1d", "2d"};
  for (const char* a : arrs) {
    const std::string v = std::string("v.") + a;
    s.push_back("% " + v + ", " + v + ", " + v);
    s.push_back("% " + v + ", " + v);
    s.push_back("% " + v + ", " + v + ", #imm");
    s.push_back("% " + v + ", " + v + ", " + v + ", #imm");
    s.push_back("% " + v + ", #imm");
    s.push_back("% " + v + ", x");
    s.push_back("% " + v + ", w");
    s.push_back("% " + v + ", " + v + ", " + v + ", " + v);
    for (const char* scalar : {"b", "h", "s", "d"}) s.push_back(std::string("% ") + scalar + ", " + v);
    const char e = a[std::string(a).size() - 1];
    const std::string el = std::string("v.") + e + "[1]";
    s.push_back("% " + v + ", " + v + ", " + el);
    s.push_back("% " + v + ", " + el);
    for (int n = 1; n <= 4; ++n) {
      std::string list = "{" + v;
      for (int k = 1; k < n; ++k) list += ", " + v;
      list += "}";
      s.push_back("% " + list + ", [x]");
      if (std::string(a) == "8b" || std::string(a) == "16b") s.push_back("% " + v + ", " + list + ", " + v);
    }
  }
  // Widening, narrowing and long forms: wide <- narrow pairs of each element size.
  const std::pair<const char*, const char*> wn[] = {{"8h", "8b"}, {"4s", "4h"}, {"2d", "2s"}, {"8h", "16b"},
                                                   {"4s", "8h"}, {"2d", "4s"}, {"4s", "16b"}, {"2s", "8b"}};
  for (const auto& [w, n] : wn) {
    const std::string W = std::string("v.") + w, N = std::string("v.") + n;
    s.push_back("% " + W + ", " + N + ", " + N);
    s.push_back("% " + W + ", " + N);
    s.push_back("% " + N + ", " + W);
    s.push_back("% " + W + ", " + W + ", " + N);
    s.push_back("% " + W + ", " + N + ", #imm");
    s.push_back("% " + N + ", " + W + ", #imm");
    s.push_back("% " + W + ", " + N + ", v." + std::string(n).substr(std::string(n).size() - 1) + "[1]");
  }
  s.push_back("% v.4s, v.16b, v.4b[1]");
  s.push_back("% v.2s, v.8b, v.4b[1]");
  s.push_back("% v.4s, v.8h, v.2h[1]");
  s.push_back("% v.2s, v.4h, v.2h[1]");
  for (const char* e : {"b", "h", "s", "d"}) {
    const std::string el = std::string("v.") + e + "[1]";
    s.push_back("% " + el + ", w");
    s.push_back("% " + el + ", x");
    s.push_back("% w, " + el);
    s.push_back("% x, " + el);
    s.push_back("% " + el + ", " + std::string("v.") + e + "[0]");
    s.push_back(std::string("% ") + e + ", " + el);
  }
  for (const char* r : {"x", "w", "b", "h", "s", "d", "q"}) {
    const std::string R(r);
    for (const char* m : {"[x]", "[x, #imm]", "[x, x]", "[x, x, lsl #imm]"}) s.push_back("% " + R + ", " + m);
    s.push_back("% " + R + ", " + R + ", [x]");
    s.push_back("% " + R + ", " + R + ", [x, #imm]");
  }
  for (const char* r : {"x", "w"}) s.push_back(std::string("% ") + r + ", " + r + ", [x]");
  return s;
}

std::string family_of(const InstForm& f) {
  for (const auto& op : f.ops)
    if (op.kind == OpKind::mem) return "mem";
  if (!refusal_reason(f).empty()) return "system";
  for (const auto& op : f.ops)
    if (op.kind == OpKind::vec || op.kind == OpKind::elem || op.kind == OpKind::list) return "asimd";
  for (const auto& op : f.ops)
    if (op.kind == OpKind::fpr) return "fp";
  return "gp";
}

}  // namespace

const std::vector<isa::ListedForm>& enumerate_forms() {
  static const std::vector<isa::ListedForm> all = [] {
    std::map<std::string, isa::ListedForm> forms;
    const auto sigs = signatures();
    for (const auto& [mnemonic, ids] : mnemonics()) {
      for (const auto& sig : sigs) {
        std::string text = sig;
        text.replace(text.find('%'), 1, mnemonic);
        auto f = resolve_inst(text);
        if (!f || f->mnemonic != mnemonic || forms.count(f->display)) continue;
        forms.emplace(f->display, isa::ListedForm{f->display, family_of(*f), f->features, refusal_reason(*f)});
      }
    }
    std::vector<isa::ListedForm> out;
    for (auto& [text, form] : forms) out.push_back(std::move(form));
    return out;
  }();
  return all;
}

std::vector<std::string> form_families() { return {"gp", "fp", "asimd", "mem", "system"}; }

}  // namespace peakprobe::a64
