// libFuzzer target: etc/ld.so.cache (binary; the compatibility probe's library lookup).
// Properties: no crash; lookups on an accepted cache stay inside it.
#include "fuzz_support.hpp"

#include "gpf/probes/compat_parsers.hpp"

GPF_FUZZ_TARGET(ld_cache) {
  const auto cache = gpf::parse_ld_so_cache(gpf::fuzz::as_text(data, size));
  if (cache) {
    for (const char* soname : {"libcuda.so.1", "libnvidia-ml.so.1", "libcudart.so.12", ""}) {
      (void)gpf::find_in_ld_cache(*cache, soname, gpf::native_ld_cache_flags());
    }
  }
  return 0;
}
