#pragma once
// `gpu-preflight snapshot -o DIR`: runs the probes on a recording Host and copies exactly what they
// read into DIR in the snapshot layout (docs/snapshot-format.md), so that `check --root DIR`
// reproduces the verdict offline. Read-only on the source; never follows links out of it (the
// Host resolves snapshot paths inside their root).
#include "gpf/capture/redactor.hpp"
#include "gpf/host/host.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/util/result.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace gpf {

struct CaptureOptions {
  std::filesystem::path out;
  bool force = false;               // replace a previous snapshot in DIR (it holds capture.json)
  unsigned mode = 0600;             // files' mode; directories add search where it grants read
  bool redact = false;              // replace names, addresses, serials, UUIDs (Redactor)
  std::size_t file_cap = 16u << 20; // bytes copied per file at most
  std::size_t log_cap = 256u << 20; // bytes of kernel log kept as dmesg.txt at most
};

struct CaptureReport {
  std::vector<std::string> captured;   // root-relative paths written
  std::vector<std::string> unreadable; // "path: reason"
  std::vector<std::string> truncated;  // paths cut at the cap
};

// Writes into a private directory beside DIR and renames it onto DIR at the end; nothing is ever
// opened through a link. Error when DIR is non-empty (without force: anything; with force: anything
// but a previous snapshot), when a write fails (the partial capture is removed), or when something
// was planted in the way.
Result<CaptureReport> capture_snapshot(Host& host, const ProbeOptions& probe_options,
                                       const CaptureOptions& options);

// Called with the capture's private directory after probing, before anything is written, when
// set: the test build's own binary (tests/support/capture_pause.cpp) sets it so tests can plant
// links in that window. Null in the installed binary, which has no such hook at all.
extern void (*g_capture_pause_hook)(const std::filesystem::path& work_dir);

// The environment variables a snapshot keeps: only those the checks read (docs/snapshot-format.md),
// and never a name that looks like a secret.
bool snapshot_keeps_variable(std::string_view name);

// Whether a variable's name says it holds a secret: KEY, TOKEN, SECRET, PASSWORD, PASSWD or
// CREDENTIAL anywhere in it, in any case.
bool names_a_secret(std::string_view name);

// "https://user:pass@host/x" -> "https://REDACTED@host/x", for every URL in value.
std::string without_url_credentials(std::string_view value);

} // namespace gpf
