// fmt's implementation, compiled once. With fmt header-only every translation unit compiled all of
// format-inl.h (about a third of a test file's compile time, a quarter of a rules file's at -O3);
// Debian ships libfmt only as a shared library, and the checker links libc alone, so the
// definitions live here, in gpf_base.
#include <fmt/format-inl.h>

// The templates that format.h declares but leaves to the library to instantiate, for char only.
FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref) -> char;
} // namespace detail
FMT_END_NAMESPACE
