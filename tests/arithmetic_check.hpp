// Tables of instruction texts and the operations per instruction (and their type) an ISA's
// arithmetic_of must give them, checked the same way for every ISA (tests/<isa>/test_arithmetic.cpp).
#pragma once
#include <catch2/catch.hpp>

#include <initializer_list>
#include <string>

namespace peakprobe::test {

struct ArithmeticExpect {
  const char* text;
  double ops;
  const char* dtype;
};

// The count of `text`: resolved by `resolve` (text -> Expected<form>), which must succeed, then
// counted by `count` (form -> optional count with ops and dtype).
template <class Resolve, class Count>
auto arithmetic_of_text(const std::string& text, Resolve resolve, Count count) {
  auto f = resolve(text);
  INFO(text << ": " << (f ? "" : f.error()));
  REQUIRE(f.ok());
  return count(*f);
}

// Every case counted, with its ops and dtype.
template <class Resolve, class Count>
void check_arithmetic(std::initializer_list<ArithmeticExpect> cases, Resolve resolve, Count count) {
  for (const auto& c : cases) {
    INFO(c.text);
    const auto a = arithmetic_of_text(c.text, resolve, count);
    REQUIRE(a.has_value());
    CHECK(a->ops == c.ops);
    CHECK(a->dtype == c.dtype);
  }
}

}  // namespace peakprobe::test
