// The module-signing certificates by path: DKMS 3 signs the modules it builds with
// /var/lib/dkms/mok.key and enrols /var/lib/dkms/mok.pub; Debian's and Ubuntu's older guides keep
// the pair under /var/lib/shim-signed/mok/; akmods (Fedora, RPM Fusion) under /etc/pki/akmods/.
#include "gpf/knowledge/module_signing.hpp"

#include <algorithm>

namespace gpf {
namespace {

constexpr SigningKeyRow k_keys[] = {
    {"var/lib/dkms/mok.pub", "DKMS", "https://github.com/dkms-project/dkms/pull/424"},
    {"var/lib/shim-signed/mok/MOK.der", "DKMS with shim-signed's key (Debian, Ubuntu)",
     "https://wiki.debian.org/SecureBoot"},
    {"etc/pki/akmods/certs/public_key.der", "akmods (Fedora, RPM Fusion)",
     "https://rpmfusion.org/Howto/Secure%20Boot"},
};

} // namespace

std::span<const SigningKeyRow> signing_key_table() {
  return k_keys;
}

const SigningKeyRow* find_signing_key(std::string_view path) {
  const auto it = std::find_if(std::begin(k_keys), std::end(k_keys),
                               [path](const SigningKeyRow& r) { return r.path == path; });
  return it == std::end(k_keys) ? nullptr : &*it;
}

} // namespace gpf
