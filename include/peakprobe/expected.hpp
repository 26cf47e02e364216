// A value or an error message: how failures travel below the command line (no exceptions).
#pragma once
#include <string>
#include <utility>
#include <variant>

namespace peakprobe {

struct Failure {
  std::string message;
};

template <typename T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Failure e) : v_(std::move(e)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  const std::string& error() const { return std::get<1>(v_).message; }

 private:
  std::variant<T, Failure> v_;
};

inline Failure make_error(std::string message) { return Failure{std::move(message)}; }

}  // namespace peakprobe
