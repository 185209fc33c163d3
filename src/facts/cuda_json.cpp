// cuda.json (docs/cuda-json.md): the CUDA facts written as JSON, and read back for replay. The
// same object is the report's facts.cuda, so a report's member can be saved as a snapshot's file.
#include "gpf/facts/cuda_json.hpp"

#include "gpf/facts/isolation_json.hpp"
#include "gpf/util/json_bounded.hpp"
#include "gpf/util/json_fields.hpp"
#include "gpf/util/json_read.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/text.hpp"
#include "gpf/util/version.hpp"

#include <fmt/format.h>

namespace gpf {

std::string cuda_version_text(int version) {
  if (version <= 0) {
    return std::to_string(version);
  }
  return Version::from_cuda_number(version).str();
}

namespace json_fields {

// A failed step or copy says how: its error members are written only then.
template <class S> constexpr bool failed(const S& s) {
  return !s.ok;
}
template <class S> constexpr bool hung(const S& s) {
  return s.timed_out;
}

template <> struct List<CudaStep> {
  static constexpr auto fields = std::to_array<Field<CudaStep>>({
      member<&CudaStep::name>("name"),
      member<&CudaStep::ok>("ok"),
      member<&CudaStep::duration_ms>("duration_ms"),
      member<&CudaStep::timed_out>("timed_out", hung<CudaStep>), // only when true
      member<&CudaStep::error_code>("error_code", failed<CudaStep>),
      member<&CudaStep::error_name>("error_name", failed<CudaStep>),
      member<&CudaStep::error_text>("error_text", failed<CudaStep>),
  });
};

template <> struct List<CudaMemoryError> {
  static constexpr auto fields = std::to_array<Field<CudaMemoryError>>({
      member<&CudaMemoryError::pattern>("pattern"),
      member<&CudaMemoryError::offset>("offset"),
      member<&CudaMemoryError::address>("address"),
      member<&CudaMemoryError::expected>("expected"),
      member<&CudaMemoryError::got>("got"),
  });
};

template <> struct List<CudaActiveResult> {
  static constexpr auto fields = std::to_array<Field<CudaActiveResult>>({
      member<&CudaActiveResult::ran>("ran"),
      member<&CudaActiveResult::not_checked>("not_checked"),
      member<&CudaActiveResult::first_kernel_ms>("first_kernel_ms"),
      member<&CudaActiveResult::memory_bytes>("memory_bytes"),
      member<&CudaActiveResult::patterns>("patterns"),
      member<&CudaActiveResult::memory_mismatches>("memory_mismatches"),
      member<&CudaActiveResult::memory_errors>("memory_errors"),
      member<&CudaActiveResult::memory_ms>("memory_ms"),
      member<&CudaActiveResult::checksum>("checksum"),
      member<&CudaActiveResult::integer_mismatches>("integer_mismatches"),
      member<&CudaActiveResult::integer_error>(
          "integer_error", [](const CudaActiveResult& a) { return !a.integer_error.empty(); }),
      member<&CudaActiveResult::compute_ms>("compute_ms"),
  });
};

template <> struct List<CudaFabricResult> {
  static constexpr auto fields = std::to_array<Field<CudaFabricResult>>({
      member<&CudaFabricResult::asked>("asked"),
      member<&CudaFabricResult::attribute>("attribute"),
      member<&CudaFabricResult::tried>("tried"),
      member<&CudaFabricResult::allocated>("allocated"),
      member<&CudaFabricResult::not_tried>("not_tried"),
      member<&CudaFabricResult::granularity>("granularity"),
      // the refusal's members only for a refusal
      member<&CudaFabricResult::call>("call",
                                      [](const CudaFabricResult& f) { return f.refused(); }),
      member<&CudaFabricResult::error_code>("error_code",
                                            [](const CudaFabricResult& f) { return f.refused(); }),
      member<&CudaFabricResult::error_name>("error_name",
                                            [](const CudaFabricResult& f) { return f.refused(); }),
      member<&CudaFabricResult::error_text>("error_text",
                                            [](const CudaFabricResult& f) { return f.refused(); }),
  });
};

template <> struct List<CudaDevice> {
  static constexpr auto fields = std::to_array<Field<CudaDevice>>({
      member<&CudaDevice::index>("index"), // on reading, the position in the array wins
      member<&CudaDevice::bus_id>("bus_id"),
      member<&CudaDevice::uuid>("uuid"),
      member<&CudaDevice::name>("name"),
      {.key = "compute_capability",
       .write =
           [](const CudaDevice& d) {
             return d.cc_major && d.cc_minor
                        ? Ordered(fmt::format("{}.{}", *d.cc_major, *d.cc_minor))
                        : Ordered(nullptr);
           }},
      member<&CudaDevice::cc_major>("cc_major"),
      member<&CudaDevice::cc_minor>("cc_minor"),
      member<&CudaDevice::total_mem_bytes>("total_mem_bytes"),
      member<&CudaDevice::compute_mode>("compute_mode"),
      member<&CudaDevice::visible_as>("visible_as"),
      member<&CudaDevice::usable>("usable"),
      // only when set, so that reports of idle GPUs keep their shape
      member<&CudaDevice::in_use>("in_use", [](const CudaDevice& d) { return d.in_use; }),
      member<&CudaDevice::holders>("holders",
                                   [](const CudaDevice& d) { return !d.holders.empty(); }),
      // Derived from steps (CudaDevice::derive_timing): written for readers of the report,
      // recomputed when a cuda.json is read back.
      written<&CudaDevice::init_ms>("init_ms"),
      written<&CudaDevice::startup_ms>("startup_ms"),
      // only when measured or refused, so that reports without the step keep their shape
      member<&CudaDevice::h2d_gbps>("h2d_gbps", [](const CudaDevice& d) { return !!d.h2d_gbps; }),
      member<&CudaDevice::d2h_gbps>("d2h_gbps", [](const CudaDevice& d) { return !!d.d2h_gbps; }),
      member<&CudaDevice::bandwidth_not_checked>(
          "bandwidth_not_checked",
          [](const CudaDevice& d) { return !d.bandwidth_not_checked.empty(); }),
      // only when the step ran or was refused, so that reports without it keep their shape
      member<&CudaDevice::active>(
          "active",
          [](const CudaDevice& d) { return d.active.ran || !d.active.not_checked.empty(); }),
      // only when the probe ran, so that reports and cuda.json files without it keep their shape
      member<&CudaDevice::fabric>("fabric", [](const CudaDevice& d) { return d.fabric.asked; }),
      member<&CudaDevice::steps>("steps"),
  });
  static Result<void> after_read(CudaDevice& d) {
    d.bus_id = normalize_bus_id(d.bus_id).value_or(d.bus_id);
    d.derive_timing();
    return {};
  }
};

template <> struct List<CudaPeerResult> {
  static constexpr auto fields = std::to_array<Field<CudaPeerResult>>({
      member<&CudaPeerResult::from>("from"),
      member<&CudaPeerResult::to>("to"),
      member<&CudaPeerResult::can_access>("can_access"),
      member<&CudaPeerResult::ok>("ok"),
      member<&CudaPeerResult::duration_ms>("duration_ms"),
      member<&CudaPeerResult::timed_out>("timed_out", hung<CudaPeerResult>),
      member<&CudaPeerResult::error_code>("error_code", failed<CudaPeerResult>),
      member<&CudaPeerResult::error_name>("error_name", failed<CudaPeerResult>),
      member<&CudaPeerResult::error_text>("error_text", failed<CudaPeerResult>),
      member<&CudaPeerResult::gbps>("gbps", [](const CudaPeerResult& p) { return !!p.gbps; }),
      member<&CudaPeerResult::bandwidth_not_checked>(
          "bandwidth_not_checked",
          [](const CudaPeerResult& p) { return !p.bandwidth_not_checked.empty(); }),
  });
};

template <> struct List<CudaBandwidthPlan> {
  static constexpr auto fields = std::to_array<Field<CudaBandwidthPlan>>({
      member<&CudaBandwidthPlan::run>("ran"),
      member<&CudaBandwidthPlan::bytes>("bytes"),
      member<&CudaBandwidthPlan::peer_bytes>("peer_bytes"),
      member<&CudaBandwidthPlan::repeats>("repeats"),
      member<&CudaBandwidthPlan::not_checked>("not_checked"),
  });
};

template <> struct List<CudaActivePlan> {
  static constexpr auto fields = std::to_array<Field<CudaActivePlan>>({
      member<&CudaActivePlan::run>("ran"),
      member<&CudaActivePlan::seconds>("seconds"),
      member<&CudaActivePlan::memory_fraction>("memory_fraction"),
      member<&CudaActivePlan::memory_cap>("memory_cap"),
      member<&CudaActivePlan::not_checked>("not_checked"),
  });
};

} // namespace json_fields

namespace {
using json_fields::Field;
using json_fields::member;
using json_fields::Ordered;
using Json = nlohmann::json;

constexpr int k_cuda_json_version = 1;
constexpr int k_max_cuda_index = 1 << 20;

// Rows "from", columns "to", over the multi-GPU child's devices: "ok", "failed", "hung",
// "not-run" ("-" on the diagonal). Derived from peers; ignored when read back.
Ordered matrix_json(const CudaFacts& c) {
  Ordered rows = Ordered::array();
  for (int from : c.multi_gpu_devices) {
    Ordered row = Ordered::array();
    for (int to : c.multi_gpu_devices) {
      std::string cell = from == to ? "-" : "not-run";
      for (const auto& p : c.peers) {
        if (p.from == from && p.to == to) {
          cell = p.ok ? "ok" : p.timed_out ? "hung" : "failed";
        }
      }
      row.push_back(cell);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// The multi-GPU child's members of CudaFacts, written as the object "multi_gpu".
constexpr auto k_multi_gpu_fields = std::to_array<Field<CudaFacts>>({
    member<&CudaFacts::multi_gpu_ran>("ran"),
    member<&CudaFacts::multi_gpu_ok>("ok"),
    {.key = "devices",
     .write = [](const CudaFacts& c) { return json_fields::to_json(c.multi_gpu_devices); },
     .read =
         [](const JsonIn& in, CudaFacts& c) {
           return in.each([&c](const JsonIn& e) -> Result<void> {
             int i = -1;
             TRY(e.get(i));
             if (i < 0 || i > k_max_cuda_index) {
               return e.not_a("a CUDA index");
             }
             c.multi_gpu_devices.push_back(i);
             return {};
           });
         }},
    member<&CudaFacts::multi_gpu_steps>("steps"),
    member<&CudaFacts::peers>("peers"),
    {.key = "matrix", .write = matrix_json},
});

} // namespace

namespace json_fields {

template <> struct List<CudaFacts> {
  static constexpr auto fields = std::to_array<Field<CudaFacts>>({
      {.key = "schema_version",
       .write = [](const CudaFacts&) { return Ordered(k_cuda_json_version); },
       .read = [](const JsonIn& in, CudaFacts&) -> Result<void> {
         int version = k_cuda_json_version;
         TRY(in.get(version));
         if (version != k_cuda_json_version) {
           return Error{fmt::format("schema_version {} is not supported (expected {})", version,
                                    k_cuda_json_version)};
         }
         return {};
       }},
      member<&CudaFacts::ran>("ran"),
      member<&CudaFacts::source>("source"),
      member<&CudaFacts::library>("library"),
      member<&CudaFacts::library_path>("library_path"),
      member<&CudaFacts::load_error>("load_error"),
      member<&CudaFacts::missing_symbols>("missing_symbols"),
      member<&CudaFacts::missing_optional_symbols>("missing_optional_symbols"),
      member<&CudaFacts::driver_version>("driver_version"),
      {.key = "driver_cuda_version",
       .write =
           [](const CudaFacts& c) {
             return c.driver_version ? Ordered(cuda_version_text(*c.driver_version))
                                     : Ordered(nullptr);
           }},
      member<&CudaFacts::device_order>("device_order"),
      member<&CudaFacts::timeout_s>("timeout_s"),
      member<&CudaFacts::wall_ms>("wall_ms"),
      member<&CudaFacts::deadline_hit>("deadline_hit"),
      member<&CudaFacts::child_error>("child_error"),
      {.key = "isolation",
       .write = [](const CudaFacts& c) { return child::isolation_json(c.isolation); },
       .read = [](const JsonIn& in, CudaFacts& c) -> Result<void> {
         TRY_ASSIGN(c.isolation, child::isolation_from_json(Json{{"isolation", in.json()}}));
         return {};
       }},
      member<&CudaFacts::enumeration_complete>("enumeration_complete"),
      member<&CudaFacts::init>("init"),
      member<&CudaFacts::enumeration_steps>("enumeration_steps"),
      member<&CudaFacts::devices>("devices"),
      // only when the step was asked for or refused, so that older reports keep their shape
      member<&CudaFacts::bandwidth>(
          "bandwidth",
          [](const CudaFacts& c) { return c.bandwidth.run || !c.bandwidth.not_checked.empty(); }),
      member<&CudaFacts::active>(
          "active",
          [](const CudaFacts& c) { return c.active.run || !c.active.not_checked.empty(); }),
      {.key = "multi_gpu",
       .write = [](const CudaFacts& c) { return write_fields(c, k_multi_gpu_fields); },
       .read = [](const JsonIn& in,
                  CudaFacts& c) { return read_fields(in, c, k_multi_gpu_fields); }},
  });
  static Result<void> after_read(CudaFacts& c) {
    for (std::size_t i = 0; i < c.devices.size(); ++i) {
      c.devices[i].index = static_cast<int>(i); // CUDA order: the array's
    }
    for (int i : c.multi_gpu_devices) {
      if (i >= static_cast<int>(c.devices.size())) {
        return Error{fmt::format("multi_gpu.devices names CUDA device {} but only {} are listed", i,
                                 c.devices.size())};
      }
    }
    return {};
  }
};

} // namespace json_fields

Ordered cuda_facts_json(const CudaFacts& c) {
  return json_fields::to_json(c);
}
Ordered cuda_active_json(const CudaActiveResult& a) {
  return json_fields::to_json(a);
}
Result<CudaActiveResult> parse_cuda_active_json(const nlohmann::json& j) {
  CudaActiveResult a;
  TRY(json_fields::read_object(JsonIn(j, "", json_fields::k_string_cap), a));
  return a;
}
Ordered cuda_fabric_json(const CudaFabricResult& f) {
  return json_fields::to_json(f);
}
Result<CudaFabricResult> parse_cuda_fabric_json(const nlohmann::json& j) {
  CudaFabricResult f;
  TRY(json_fields::read_object(JsonIn(j, "", json_fields::k_string_cap), f));
  return f;
}
Result<CudaFacts> parse_cuda_json(std::string_view text) {
  if (!json_depth_within(text)) {
    return Error{fmt::format("nested deeper than {} levels", k_json_max_depth)};
  }
  // Step lists are cut while parsing, so a padded file never becomes a large document: the
  // first k_max_replayed_steps of each list are kept, then only the first failed step.
  const JsonObjectFilter cut_steps = [](std::string_view list, const nlohmann::json& step,
                                        JsonArrayState& st) {
    if (list != "steps" && list != "enumeration_steps") {
      return true;
    }
    const auto ok = step.find("ok");
    const bool failed = ok != step.end() && *ok == false;
    if (st.kept < k_max_replayed_steps || (failed && !st.flag)) {
      ++st.kept;
      st.flag = st.flag || failed;
      return true;
    }
    return false;
  };
  TRY_ASSIGN(auto parsed,
             parse_json_bounded(text, k_max_json_elements, k_max_json_members, cut_steps));
  if (parsed.skipped > 0) {
    return Error{too_wide(parsed.skipped)};
  }
  const auto& doc = parsed.doc;
  const std::size_t not_kept = parsed.dropped_by_filter;
  CudaFacts facts;
  facts.ran = true; // a recorded file says the probe ran unless it says otherwise
  TRY(json_fields::read_object(JsonIn(doc, "", json_fields::k_string_cap), facts));
  facts.steps_not_kept = not_kept;
  return facts;
}

} // namespace gpf
