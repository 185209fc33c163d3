// nvml.json (docs/snapshot-format.md): the NVML facts as JSON, and read back for replay. The same
// object is the report's facts.nvml; the GPU objects are also the children's "gpu" events.
#include "gpf/facts/nvml_json.hpp"

#include "gpf/facts/isolation_json.hpp"
#include "gpf/util/json_bounded.hpp"
#include "gpf/util/json_fields.hpp"
#include "gpf/util/json_read.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

namespace gpf {
namespace json_fields {

template <> struct List<NvmlCall> {
  static constexpr auto fields = std::to_array<Field<NvmlCall>>({
      member<&NvmlCall::name>("name"),
      member<&NvmlCall::code>("code"),
      member<&NvmlCall::text>("text"),
  });
};

template <> struct List<NvmlHang> {
  static constexpr auto fields = std::to_array<Field<NvmlHang>>({
      member<&NvmlHang::step>("step"),
      member<&NvmlHang::after_ms>("after_ms"),
  });
};

template <> struct List<NvmlProcess> {
  static constexpr auto fields = std::to_array<Field<NvmlProcess>>({
      member<&NvmlProcess::pid>("pid"),
      member<&NvmlProcess::used_bytes>("used_bytes"),
  });
};

template <> struct List<NvmlLinkErrors> {
  static constexpr auto fields = std::to_array<Field<NvmlLinkErrors>>({
      member<&NvmlLinkErrors::link>("link"),
      member<&NvmlLinkErrors::replay>("replay"),
      member<&NvmlLinkErrors::recovery>("recovery"),
      member<&NvmlLinkErrors::crc_flit>("crc_flit"),
      member<&NvmlLinkErrors::crc_data>("crc_data"),
  });
};

template <> struct List<NvmlCounters> {
  static constexpr auto fields = std::to_array<Field<NvmlCounters>>({
      member<&NvmlCounters::ecc_volatile_corrected>("ecc_volatile_corrected"),
      member<&NvmlCounters::ecc_volatile_uncorrected>("ecc_volatile_uncorrected"),
      member<&NvmlCounters::pcie_replay>("pcie_replay"),
      member<&NvmlCounters::sram_threshold_exceeded>("sram_threshold_exceeded"),
      member<&NvmlCounters::remap_pending>("remap_pending"),
      member<&NvmlCounters::nvlinks>("nvlinks"),
  });
};

template <> struct List<NvmlSamples> {
  static constexpr auto fields = std::to_array<Field<NvmlSamples>>({
      member<&NvmlSamples::count>("count"),
      member<&NvmlSamples::sm_clock_max_mhz>("sm_clock_max_mhz"),
      member<&NvmlSamples::power_max_mw>("power_max_mw"),
      member<&NvmlSamples::clock_event_reasons>("clock_event_reasons"),
  });
};

template <> struct List<NvmlTraffic> {
  static constexpr auto fields = std::to_array<Field<NvmlTraffic>>({
      member<&NvmlTraffic::before>("before"),
      member<&NvmlTraffic::after>("after"),
      member<&NvmlTraffic::during>("during"),
      member<&NvmlTraffic::processes_after>("processes_after"),
      member<&NvmlTraffic::not_read>("not_read"),
      member<&NvmlTraffic::waited_ms>("waited_ms"),
  });
};

template <> struct List<NvmlGpuInstance> {
  static constexpr auto fields = std::to_array<Field<NvmlGpuInstance>>({
      member<&NvmlGpuInstance::profile>("profile"),
      member<&NvmlGpuInstance::profile_id>("profile_id"),
      member<&NvmlGpuInstance::id>("id"),
      member<&NvmlGpuInstance::placement_start>("placement_start"),
      member<&NvmlGpuInstance::placement_size>("placement_size"),
      member<&NvmlGpuInstance::slice_count>("slice_count"),
      member<&NvmlGpuInstance::memory_mib>("memory_mib"),
  });
};

template <> struct List<NvmlGpu> {
  static constexpr auto fields = std::to_array<Field<NvmlGpu>>({
      member<&NvmlGpu::bus_id>("bus_id"),
      member<&NvmlGpu::nvml_bus_id>("nvml_bus_id"),
      member<&NvmlGpu::index>("index"),
      member<&NvmlGpu::name>("name"),
      member<&NvmlGpu::uuid>("uuid"),
      member<&NvmlGpu::minor>("minor"),
      member<&NvmlGpu::architecture>("architecture"),
      member<&NvmlGpu::ecc_enabled>("ecc_enabled"),
      member<&NvmlGpu::ecc_pending_enabled>("ecc_pending_enabled"),
      member<&NvmlGpu::ecc_volatile_uncorrected>("ecc_volatile_uncorrected"),
      member<&NvmlGpu::ecc_aggregate_uncorrected>("ecc_aggregate_uncorrected"),
      member<&NvmlGpu::retired_pages_sbe>("retired_pages_sbe"),
      member<&NvmlGpu::retired_pages_dbe>("retired_pages_dbe"),
      member<&NvmlGpu::retired_pages_pending>("retired_pages_pending"),
      member<&NvmlGpu::remapped_correctable>("remapped_correctable"),
      member<&NvmlGpu::remapped_uncorrectable>("remapped_uncorrectable"),
      member<&NvmlGpu::remap_pending>("remap_pending"),
      member<&NvmlGpu::remap_failure>("remap_failure"),
      member<&NvmlGpu::recovery_action>("recovery_action"),
      member<&NvmlGpu::clock_event_reasons>("clock_event_reasons"),
      member<&NvmlGpu::temperature_c>("temperature_c"),
      member<&NvmlGpu::slowdown_temperature_c>("slowdown_temperature_c"),
      member<&NvmlGpu::persistence_mode>("persistence_mode"),
      member<&NvmlGpu::compute_mode>("compute_mode"),
      member<&NvmlGpu::mig_current>("mig_current"),
      member<&NvmlGpu::mig_pending>("mig_pending"),
      member<&NvmlGpu::memory_total_bytes>("memory_total_bytes"),
      member<&NvmlGpu::gpu_instances>("gpu_instances"), // null: MIG off, or not read
      member<&NvmlGpu::pcie_gen>("pcie_gen"),
      member<&NvmlGpu::pcie_gen_max>("pcie_gen_max"),
      member<&NvmlGpu::pcie_width>("pcie_width"),
      member<&NvmlGpu::pcie_width_max>("pcie_width_max"),
      member<&NvmlGpu::fabric_state>("fabric_state"),
      member<&NvmlGpu::fabric_status>("fabric_status"),
      member<&NvmlGpu::nvlink_active>("nvlink_active"),
      member<&NvmlGpu::processes>("processes"), // null: could not be listed
      member<&NvmlGpu::inforom_valid>("inforom_valid"),
      member<&NvmlGpu::traffic>("traffic"),
      member<&NvmlGpu::calls>("calls"),
      member<&NvmlGpu::handle_error>("handle_error"),
      member<&NvmlGpu::hang>("hang"),
      member<&NvmlGpu::child_error>("child_error"),
  });
  static Result<void> after_read(NvmlGpu& g) {
    g.bus_id = normalize_bus_id(g.bus_id).value_or(g.bus_id);
    return {};
  }
};

constexpr int k_nvml_json_version = 1;

// source is not written: the probe sets it ("live", "nvml.json").
template <> struct List<NvmlFacts> {
  static constexpr auto fields = std::to_array<Field<NvmlFacts>>({
      {.key = "nvml_json_version",
       .write = [](const NvmlFacts&) { return Ordered(k_nvml_json_version); }},
      member<&NvmlFacts::ran>("ran"),
      member<&NvmlFacts::library>("library"),
      member<&NvmlFacts::library_path>("library_path"),
      member<&NvmlFacts::load_error>("load_error"),
      member<&NvmlFacts::missing_symbols>("missing_symbols"),
      member<&NvmlFacts::missing_optional_symbols>("missing_optional_symbols"),
      member<&NvmlFacts::nvml_version>("nvml_version"),
      member<&NvmlFacts::driver_version>("driver_version"),
      member<&NvmlFacts::init_call>("init_call"),
      member<&NvmlFacts::init_code>("init_code"),
      member<&NvmlFacts::init_text>("init_text"),
      member<&NvmlFacts::init_hang>("init_hang"),
      member<&NvmlFacts::device_count>("device_count"),
      member<&NvmlFacts::gpus>("gpus"),
      member<&NvmlFacts::deadline_hit>("deadline_hit"),
      member<&NvmlFacts::timeout_s>("timeout_s"),
      member<&NvmlFacts::wall_ms>("wall_ms"),
      member<&NvmlFacts::child_error>("child_error"),
      {.key = "isolation",
       .write = [](const NvmlFacts& n) { return child::isolation_json(n.isolation); },
       .read = [](const JsonIn& in, NvmlFacts& n) -> Result<void> {
         TRY_ASSIGN(n.isolation,
                    child::isolation_from_json(nlohmann::json{{"isolation", in.json()}}));
         return {};
       }},
  });
};

} // namespace json_fields

nlohmann::ordered_json nvml_gpu_json(const NvmlGpu& gpu) {
  return json_fields::to_json(gpu);
}

nlohmann::ordered_json nvml_traffic_json(const NvmlTraffic& traffic) {
  return json_fields::to_json(traffic);
}

nlohmann::ordered_json nvml_facts_json(const NvmlFacts& n) {
  return json_fields::to_json(n);
}

Result<NvmlGpu> nvml_gpu_from_json(const nlohmann::json& j) {
  NvmlGpu g;
  TRY(json_fields::read_object(JsonIn(j, "gpu", json_fields::k_string_cap), g));
  return g;
}

Result<NvmlTraffic> nvml_traffic_from_json(const nlohmann::json& j) {
  NvmlTraffic t;
  TRY(json_fields::read_object(JsonIn(j, "traffic", json_fields::k_string_cap), t));
  return t;
}

Result<NvmlFacts> parse_nvml_json(std::string_view text) {
  if (!json_depth_within(text)) {
    return Error{fmt::format("nested deeper than {} levels", k_json_max_depth)};
  }
  TRY_ASSIGN(auto parsed, parse_json_bounded(text, k_max_json_elements, k_max_json_members));
  if (parsed.skipped > 0) {
    return Error{too_wide(parsed.skipped)};
  }
  const auto& doc = parsed.doc;
  NvmlFacts n;
  TRY(json_fields::read_object(JsonIn(doc, "", json_fields::k_string_cap), n));
  return n;
}

} // namespace gpf
