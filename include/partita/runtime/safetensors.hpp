#pragma once
/// Reading and writing safetensors files and buffers.
#include <cstddef>
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "partita/core/error.hpp"
#include "partita/core/detail/concat.hpp"
#include "partita/runtime/detail/json.hpp"
#include "partita/runtime/detail/name_order.hpp"
#include "partita/runtime/tensor_data.hpp"

namespace partita {

/// The `__metadata__` of a safetensors file: string pairs, in file order.
using safetensors_metadata = std::vector<std::pair<std::string, std::string>>;

class safetensors_file;

/// Parses a whole safetensors file held in memory; `origin` names it in error messages.
inline safetensors_file parse_safetensors(std::vector<std::byte> bytes, std::string origin = "<memory>");

/// A validated safetensors file. It owns the file's bytes, and its tensors' `bytes` point into
/// them, so it can be moved but not copied. Tensor data is aligned for its element type only when
/// the writer aligned it, as the reference writer does.
class safetensors_file {
 public:
  safetensors_file(safetensors_file&&) noexcept = default;
  safetensors_file& operator=(safetensors_file&&) noexcept = default;
  safetensors_file(const safetensors_file&) = delete;
  safetensors_file& operator=(const safetensors_file&) = delete;

  /// The tensor called `name`, or nullptr.
  const tensor_data* find(std::string_view name) const { return detail::find_by_name(tensors_, order_, name); }

  /// Every tensor, in header order.
  std::span<const tensor_data> tensors() const { return tensors_; }

  /// The path the file was loaded from, or the origin given to `parse_safetensors`.
  std::string_view origin() const { return origin_; }

  /// The `__metadata__` pairs; empty when the file has none.
  const safetensors_metadata& metadata() const { return metadata_; }

 private:
  friend safetensors_file parse_safetensors(std::vector<std::byte>, std::string);
  safetensors_file() = default;

  std::vector<std::byte> bytes_;
  std::string origin_;
  std::vector<tensor_data> tensors_;
  std::vector<std::size_t> order_;  // positions of tensors_, sorted by name
  safetensors_metadata metadata_;
};

namespace detail {

// Same bound as the reference implementation: larger headers are hostile, not models.
inline constexpr std::uint64_t safetensors_max_header = 100'000'000;

// Bytes per element of the dtypes the safetensors format defines with whole-byte elements,
// known to Partita or not, so that sizes are checked for all of them; 0 for any other name.
constexpr std::size_t safetensors_element_size(std::string_view name) {
  constexpr std::pair<std::string_view, std::size_t> sizes[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2},
      {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},    {"U32", 4},     {"F32", 4},
      {"I64", 8},  {"U64", 8}, {"F64", 8}};
  for (const auto& [n, s] : sizes)
    if (n == name) return s;
  return 0;
}

inline std::uint64_t read_le64(const std::byte* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
  return v;
}

inline void append_le64(std::vector<std::byte>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
}

// Messages are string views joined in plain functions, not `std::string +` chains (an overload
// resolution per `+`, in every file that includes the runtime).
/// Throws "origin: " followed by the parts.
[[noreturn]] inline void safetensors_fail(std::string_view origin, std::initializer_list<std::string_view> what) {
  std::string message(origin);
  message += ": ";
  for (const std::string_view part : what) message += part;
  detail::raise(error(message));
}

/// Throws "origin: tensor 'name': " followed by the parts.
[[noreturn]] inline void safetensors_fail(std::string_view origin, std::string_view name,
                                          std::initializer_list<std::string_view> what) {
  std::string message(origin);
  message += ": tensor '";
  message += name;
  message += "': ";
  for (const std::string_view part : what) message += part;
  detail::raise(error(message));
}

/// The keys of `members`, in order.
inline std::vector<std::string_view> member_keys(const std::vector<json::member>& members) {
  std::vector<std::string_view> keys;
  keys.reserve(members.size());
  for (const auto& m : members) keys.push_back(std::string_view(m.key));
  return keys;
}

// A JSON value as a message spells it: `-3`, `2.5`, `"x"`, `an array`.
inline std::string describe(const json::value& v) {
  using k = json::value::kind;
  switch (v.type) {
    case k::null: return "null";
    case k::boolean: return v.boolean ? "true" : "false";
    case k::integer: return std::to_string(v.integer);
    case k::number: return v.text;
    case k::string: return json::quote(v.text);
    case k::array: return "an array";
    case k::object: return "an object";
  }
  return "?";
}

inline std::optional<std::uint64_t> non_negative(const json::value& v) {
  if (v.type != json::value::kind::integer || v.integer < 0) return std::nullopt;
  return static_cast<std::uint64_t>(v.integer);
}

inline safetensors_metadata read_safetensors_metadata(std::string_view origin, const json::value& v) {
  if (v.type != json::value::kind::object)
    safetensors_fail(origin, {"__metadata__ is ", describe(v), ", expected an object of strings"});
  safetensors_metadata out;
  const std::vector<std::size_t> first = first_positions(member_keys(v.members));
  for (std::size_t i = 0; i < v.members.size(); ++i) {
    const auto& m = v.members[i];
    if (first[i] != i) safetensors_fail(origin, {"duplicate __metadata__ key '", m.key, "'"});
    if (m.val.type != json::value::kind::string)
      safetensors_fail(origin, {"__metadata__ key '", m.key, "' is ", describe(m.val), ", expected a string"});
    out.emplace_back(m.key, m.val.text);
  }
  return out;
}

// Validates one header entry against the data section and returns its tensor.
inline tensor_data read_safetensors_entry(std::string_view origin, const std::string& name, const json::value& v,
                                          std::span<const std::byte> data) {
  auto fail = [&](std::initializer_list<std::string_view> what) { safetensors_fail(origin, name, what); };
  if (v.type != json::value::kind::object) fail({"entry is ", describe(v), ", expected an object"});

  const json::value* dtype_v = nullptr;
  const json::value* shape_v = nullptr;
  const json::value* offsets_v = nullptr;
  for (const auto& m : v.members) {
    const json::value** slot = m.key == "dtype" ? &dtype_v
                             : m.key == "shape" ? &shape_v
                             : m.key == "data_offsets" ? &offsets_v : nullptr;
    // Unknown keys are ignored, as the reference reader does, so newer writers stay readable.
    if (!slot) continue;
    if (*slot) fail({"\"", m.key, "\" appears twice"});
    *slot = &m.val;
  }
  if (!dtype_v) fail({"missing \"dtype\""});
  if (!shape_v) fail({"missing \"shape\""});
  if (!offsets_v) fail({"missing \"data_offsets\""});

  tensor_data t;
  t.name = name;
  if (dtype_v->type != json::value::kind::string) fail({"\"dtype\" is ", describe(*dtype_v), ", expected a string"});
  t.dtype_name = dtype_v->text;
  t.type = dtype_from_safetensors_name(t.dtype_name);

  if (shape_v->type != json::value::kind::array) fail({"\"shape\" is ", describe(*shape_v), ", expected an array"});
  for (std::size_t i = 0; i < shape_v->items.size(); ++i) {
    const auto d = non_negative(shape_v->items[i]);
    if (!d)
      fail({"dimension ", std::to_string(i), " is ", describe(shape_v->items[i]), ", expected a non-negative integer"});
    t.dims.push_back(static_cast<std::int64_t>(*d));
  }
  const auto elements = checked_elements(t.dims);
  if (!elements) fail({"shape ", dims_string(t.dims), " has more elements than fit in 63 bits"});

  const auto& offs = offsets_v->items;
  std::optional<std::uint64_t> begin, end;
  if (offsets_v->type == json::value::kind::array && offs.size() == 2) {
    begin = non_negative(offs[0]);
    end = non_negative(offs[1]);
  }
  if (!begin || !end) {
    std::string found = describe(*offsets_v);
    if (offsets_v->type == json::value::kind::array) {
      found = "[";
      for (std::size_t i = 0; i < offs.size(); ++i) {
        if (i) found += ", ";
        found += describe(offs[i]);
      }
      found += "]";
    }
    fail({"data_offsets must be two non-negative integers [begin, end], found ", found});
  }
  const std::string offsets = concat("data_offsets [", std::to_string(*begin), ", ", std::to_string(*end), "]");
  if (*begin > *end) fail({offsets, " decrease"});
  if (*end > data.size())
    fail({offsets, " reach beyond the data section of ", std::to_string(data.size()), " bytes"});
  const std::uint64_t held = *end - *begin;
  if (const std::size_t size = safetensors_element_size(t.dtype_name)) {
    const auto needed = checked_bytes(*elements, size);
    if (!needed || *needed != held)
      fail({t.dtype_name, " shape ", dims_string(t.dims), " needs ",
            needed ? std::to_string(*needed) : std::string("more than 2^64"), " bytes, but ", offsets, " hold ",
            std::to_string(held)});
  }
  t.bytes = data.subspan(static_cast<std::size_t>(*begin), static_cast<std::size_t>(held));
  return t;
}

}  // namespace detail

inline safetensors_file parse_safetensors(std::vector<std::byte> bytes, std::string origin) {
  safetensors_file f;
  f.bytes_ = std::move(bytes);
  f.origin_ = std::move(origin);
  const std::string_view from = f.origin_;
  const std::span<const std::byte> all = f.bytes_;

  if (all.size() < 8)
    detail::safetensors_fail(from, {"file is ", std::to_string(all.size()), " bytes, too short for the 8-byte header length"});
  const std::uint64_t header_len = detail::read_le64(all.data());
  if (header_len > all.size() - 8)
    detail::safetensors_fail(from, {"header length ", std::to_string(header_len), " is larger than the ",
                                    std::to_string(all.size() - 8), " bytes after the length field (file is ",
                                    std::to_string(all.size()), " bytes)"});
  if (header_len > detail::safetensors_max_header)
    detail::safetensors_fail(from, {"header length ", std::to_string(header_len), " exceeds the limit of ",
                                    std::to_string(detail::safetensors_max_header), " bytes"});
  const auto n = static_cast<std::size_t>(header_len);
  const std::string_view header(reinterpret_cast<const char*>(all.data() + 8), n);
  const std::span<const std::byte> data = all.subspan(8 + n);

  detail::json::value root;
  try {
    root = detail::json::parse(header);
  } catch (const detail::json::syntax_error& e) {
    detail::safetensors_fail(from, {"malformed JSON header at byte ", std::to_string(e.offset),
                                    " of the header (file offset ", std::to_string(e.offset + 8), "): ", e.reason});
  }
  if (root.type != detail::json::value::kind::object)
    detail::safetensors_fail(from, {"header is ", detail::describe(root), ", expected a JSON object"});

  bool has_metadata = false;
  const std::vector<std::size_t> first = detail::first_positions(detail::member_keys(root.members));
  for (std::size_t i = 0; i < root.members.size(); ++i) {
    const auto& m = root.members[i];
    if (m.key == "__metadata__") {
      if (has_metadata) detail::safetensors_fail(from, {"__metadata__ appears twice"});
      has_metadata = true;
      f.metadata_ = detail::read_safetensors_metadata(from, m.val);
      continue;
    }
    // An earlier key the same is an earlier tensor: "__metadata__" took the branch above.
    if (first[i] != i) detail::safetensors_fail(from, {"duplicate tensor '", m.key, "'"});
    f.tensors_.push_back(detail::read_safetensors_entry(from, m.key, m.val, data));
  }
  f.order_ = detail::sorted_by_name(f.tensors_);
  return f;
}

namespace detail {

/// A FILE* that closes itself.
struct file_handle {
  std::FILE* f;
  explicit file_handle(const std::string& path, const char* mode) : f(std::fopen(path.c_str(), mode)) {}
  ~file_handle() {
    if (f) std::fclose(f);
  }
  file_handle(const file_handle&) = delete;
  file_handle& operator=(const file_handle&) = delete;
};

}  // namespace detail

/// Reads and validates the safetensors file at `path` (a `std::string`, or a
/// `std::filesystem::path`, which converts to one).
inline safetensors_file load_safetensors(const std::string& path) {
  detail::file_handle in(path, "rb");
  if (!in.f) detail::raise(error(detail::concat(path, ": cannot open safetensors file: ", std::strerror(errno))));
  std::vector<std::byte> bytes;
  std::byte chunk[1 << 16];
  for (std::size_t got; (got = std::fread(chunk, 1, sizeof chunk, in.f)) > 0;) bytes.insert(bytes.end(), chunk, chunk + got);
  if (std::ferror(in.f)) detail::raise(error(detail::concat(path, ": cannot read safetensors file: ", std::strerror(errno))));
  return parse_safetensors(std::move(bytes), path);
}

/// Serializes `tensors`, contiguously in the given order, into the bytes of a safetensors file.
/// The header is compact JSON padded with spaces to a multiple of 8 bytes, as the reference
/// writer does, so the data section starts 8-aligned.
inline std::vector<std::byte> to_safetensors(std::span<const tensor_data> tensors,
                                             const safetensors_metadata& metadata = {}) {
  constexpr std::string_view from = "safetensors writer";
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    std::vector<std::string_view> keys;
    for (const auto& [k, v] : metadata) keys.push_back(std::string_view(k));
    const std::vector<std::size_t> first = detail::first_positions(keys);
    for (std::size_t i = 0; i < metadata.size(); ++i) {
      const auto& [k, v] = metadata[i];
      if (first[i] != i) detail::safetensors_fail(from, {"duplicate __metadata__ key '", k, "'"});
      if (!detail::json::is_utf8(k) || !detail::json::is_utf8(v))
        detail::safetensors_fail(from, {"__metadata__ key '", k, "' or its value is not valid UTF-8"});
      if (i) header += ',';
      header += detail::json::quote(k);
      header += ':';
      header += detail::json::quote(v);
    }
    header += "}";
  }

  std::vector<std::string_view> names;
  names.reserve(tensors.size());
  for (const auto& t : tensors) names.push_back(std::string_view(t.name));
  const std::vector<std::size_t> first = detail::first_positions(names);
  std::uint64_t offset = 0;
  for (std::size_t n = 0; n < tensors.size(); ++n) {
    const tensor_data& t = tensors[n];
    auto fail = [&](std::initializer_list<std::string_view> what) { detail::safetensors_fail(from, t.name, what); };
    if (t.name == "__metadata__") fail({"the name is reserved for metadata"});
    if (first[n] != n) detail::safetensors_fail(from, {"duplicate tensor '", t.name, "'"});
    if (!detail::json::is_utf8(t.name)) fail({"the name is not valid UTF-8"});

    std::string dtype_name = t.dtype_name;
    if (t.type) {
      const std::string_view known = safetensors_name(*t.type);
      if (dtype_name.empty()) dtype_name = known;
      else if (dtype_name != known)
        fail({"dtype_name ", dtype_name, " disagrees with type ", known});
    }
    if (dtype_name.empty()) fail({"no dtype"});
    if (!detail::json::is_utf8(dtype_name)) fail({"dtype name is not valid UTF-8"});

    const auto elements = detail::checked_elements(t.dims);
    if (!elements) fail({"invalid shape ", detail::dims_string(t.dims)});
    if (const std::size_t size = detail::safetensors_element_size(dtype_name)) {
      const auto needed = detail::checked_bytes(*elements, size);
      if (!needed || *needed != t.bytes.size())
        fail({dtype_name, " shape ", detail::dims_string(t.dims), " needs ",
              needed ? std::to_string(*needed) : std::string("more than 2^64"), " bytes, got ",
              std::to_string(t.bytes.size())});
    }

    std::string shape = "[";
    for (std::size_t i = 0; i < t.dims.size(); ++i) {
      if (i) shape += ',';
      shape += std::to_string(t.dims[i]);
    }
    shape += "]";
    const std::uint64_t end = offset + t.bytes.size();
    if (header.size() > 1) header += ",";
    header += detail::concat(detail::json::quote(t.name), ":{\"dtype\":", detail::json::quote(dtype_name),
                             ",\"shape\":", shape, ",\"data_offsets\":[", std::to_string(offset), ",",
                             std::to_string(end), "]}");
    offset = end;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');

  std::vector<std::byte> out;
  out.reserve(8 + header.size() + static_cast<std::size_t>(offset));
  detail::append_le64(out, header.size());
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  for (const auto& t : tensors) out.insert(out.end(), t.bytes.begin(), t.bytes.end());
  return out;
}

/// Writes `tensors` to a safetensors file at `path`, replacing any file there.
inline void save_safetensors(const std::string& path, std::span<const tensor_data> tensors,
                             const safetensors_metadata& metadata = {}) {
  const std::vector<std::byte> bytes = to_safetensors(tensors, metadata);
  detail::file_handle out(path, "wb");
  if (!out.f) detail::raise(error(detail::concat(path, ": cannot open for writing: ", std::strerror(errno))));
  const std::size_t written = std::fwrite(bytes.data(), 1, bytes.size(), out.f);
  const bool closed = std::fclose(std::exchange(out.f, nullptr)) == 0;
  if (written != bytes.size() || !closed)
    detail::raise(error(detail::concat(path, ": failed to write ", std::to_string(bytes.size()), " bytes")));
}

}  // namespace partita
