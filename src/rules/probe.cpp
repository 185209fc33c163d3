// Rules whose id starts with "probe.": the checker's own probes: an input that could not be read is
// never a pass.
#include "common.hpp"

#include "gpf/facts/budget.hpp"

namespace gpf {

std::span<const Rule> probe_rules() {
  static const Rule rows[] = {
      {.id = "probe.failed",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "Every probe could read its input",
       .remedy =
           "Run as root or fix the unreadable path named in the evidence; a check that could not read is not a pass",
       .source = "docs/sources.md#design-decisions-of-the-checker",
       .explanation =
           "A probe could not read its input (a file that exists but is not readable, a damaged "
           "snapshot entry), so what it checks was not judged. An input that was not read is "
           "not counted as healthy, so the check warns instead of passing. Confirm by hand: "
           "read the path in the evidence as the same user (`cat PATH`); some inputs, such as "
           "the kernel log on hardened kernels, need root. Warn: --strict makes the check not "
           "ready.",
       .evidence =
           "The status each probe recorded, kernel-log aside (log.not-readable judges it): the "
           "input it could not read with the OS error, or could not make sense of.",
       .cases = {fires("cuda-replay-garbage"), silent("cuda-replay-gpu-hung")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& p : c.facts.probes) {
           // the kernel log has its own finding (log.not-readable) with the remedies that fit it
           if (p.state == ProbeState::error && p.name != "kernel-log") {
             Hit hit{
                 fmt::format("Probe \"{}\" could not read its input, so its checks are incomplete",
                             p.name),
                 {p.message}};
             // the remedy that fits the error: root helps only where permission was denied
             if (contains(p.message, "Permission denied") ||
                 contains(p.message, "Operation not permitted")) {
               hit.remedy =
                   "Run as root, or as a user that can read the path named in the evidence";
             } else if (contains(p.message, "No such file")) {
               hit.remedy =
                   "The path named in the evidence disappeared while it was read, or is missing from the snapshot: check again, or capture the snapshot again (`gpu-preflight snapshot -o DIR` as root)";
             } else {
               hit.remedy =
                   "The input named in the evidence is damaged or not in the expected format (see the reason): look at it by hand, or capture the snapshot again";
             }
             hits.push_back(std::move(hit));
           }
         }
         return hits;
       }},
      // A stage the user asked for (CUDA and NVML unless --no-cuda/--no-nvml, NCCL with --nccl)
      // that --budget left out is said, never a silent pass; --strict makes it not ready.
      {.id = "probe.stage-over-budget",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info without --strict (the check still passes, and says what it left out)",
       .title = "Every stage asked for fitted --budget",
       .remedy =
           "Give --budget a few seconds more than the stage's deadline named in the evidence, or a "
           "shorter deadline (--cuda-timeout, --nccl-timeout) that fits it; with the contrib/slurm "
           "scripts, raise GPU_PREFLIGHT_TIMEOUT",
       .source = "docs/usage.md#time-budget",
       .explanation =
           "A live stage (the CUDA and NVML children, or the NCCL test) starts only when its "
           "deadline fits what is left of --budget, so that the check ends with a verdict instead "
           "of being killed by a wrapper's timeout. A stage left out was not judged: a node whose "
           "cuInit hangs passes such a check. Information without --strict (the one-line format "
           "says `(CUDA not checked: budget)`), a warning with --strict, which then makes the "
           "check not ready.",
       .evidence = "Each live probe skipped for the budget, with its deadline and the time left.",
       .cases = {fires_with("--libcuda libcuda-absent-for-test.so.1 --budget 5 --cuda-timeout 10",
                            "cuda-4gpu"),
                 silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& p : c.facts.probes) {
           if (!over_budget(p)) {
             continue;
           }
           Hit hit{fmt::format("The {} stage was not checked: its deadline does not fit --budget",
                               stage_name(p)),
                   {fmt::format("probe {}: {}", p.name, p.message)}};
           if (!c.options.strict) {
             hit.severity = Severity::info;
           }
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
      // A cut is never silent: the part read was judged, the rest was not.
      {.id = "probe.input-cut",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "Every input was read whole",
       .remedy =
           "Look at the named file: an input this large is unusual (a snapshot may have been tampered with); "
           "the checks judged only the part that was read",
       .source = "docs/reliability.md#bounded-reads-bounded-memory",
       .explanation =
           "Every read is capped (docs/reliability.md lists the caps) so that a huge or endless file cannot exhaust memory or time. "
           "A file longer than its cap is judged on its first part only, and this says which.",
       .evidence = "Each input that was cut, with the probe that read it and the cap.",
       .cases = {fires("cuda-replay-cut"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<std::string> ev;
         for (const auto& p : c.facts.probes) {
           for (const auto& cut : p.cut) {
             ev.push_back(fmt::format("probe {}: {}", p.name, cut));
           }
         }
         if (ev.empty()) {
           return {};
         }
         const std::size_t n = ev.size();
         if (ev.size() > k_max_evidence) {
           ev.resize(k_max_evidence);
         }
         return {
             {fmt::format("{} {} longer than {} read cap and {} judged on {} first part only",
                          counted(n, "input"), n == 1 ? "was" : "were", n == 1 ? "its" : "their",
                          n == 1 ? "was" : "were", n == 1 ? "its" : "their"),
              std::move(ev)}};
       }},
      // The child still ran: its results stand, but the run may have changed the host.
      {.id = "probe.driver-not-isolated",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "The CUDA and NVML children could not change the host",
       .remedy =
           "Run the check with CAP_SYS_ADMIN (on the host, or in a privileged container) so that its children get a private mount namespace, or as an ordinary user; "
           "pass --no-cuda --no-nvml where nothing may touch the driver",
       .source = "docs/reliability.md#read-only",
       .explanation =
           "NVIDIA's libraries re-create /dev/char links and run nvidia-modprobe to load modules and create device nodes when they find them missing. "
           "Each driver child first shuts those doors; "
           "this says that one could not, so the live run may have changed /dev.",
       .evidence = "the step that failed, with its error, per stage",
       .cases = {fires("cuda-not-isolated"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<std::string> ev;
         for (const auto& [stage, iso] : {std::pair{"CUDA", &c.facts.cuda.isolation},
                                          std::pair{"NVML", &c.facts.nvml.isolation}}) {
           if (*iso && !(*iso)->isolated) {
             ev.push_back(fmt::format("{} children: {}", stage, (*iso)->detail));
           }
         }
         if (ev.empty()) {
           return {};
         }
         return {
             {"The driver children ran without isolation from the host: NVIDIA's libraries could have changed /dev or loaded modules",
              std::move(ev)}};
       }},
  };
  return rows;
}

} // namespace gpf
