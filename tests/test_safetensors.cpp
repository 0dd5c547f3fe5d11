#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "partita/runtime/safetensors.hpp"
#include "partita/runtime/weight_set.hpp"

using namespace partita;

namespace {

using byte_vector = std::vector<std::byte>;

byte_vector to_bytes(std::string_view s) {
  byte_vector r;
  for (char c : s) r.push_back(static_cast<std::byte>(c));
  return r;
}

// A file with `header` stored verbatim (no padding) and `data_size` bytes of data.
byte_vector make_file(std::string_view header, std::size_t data_size = 0) {
  byte_vector r;
  detail::append_le64(r, header.size());
  const byte_vector h = to_bytes(header);
  r.insert(r.end(), h.begin(), h.end());
  for (std::size_t i = 0; i < data_size; ++i) r.push_back(static_cast<std::byte>(i));
  return r;
}

std::string error_of(byte_vector bytes) {
  try {
    parse_safetensors(std::move(bytes), "bad.safetensors");
  } catch (const partita::error& e) {
    return e.what();
  }
  return "<no error>";
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::vector<float> floats_of(const tensor_data& t) {
  std::vector<float> r(t.bytes.size() / sizeof(float));
  if (!r.empty()) std::memcpy(r.data(), t.bytes.data(), r.size() * sizeof(float));
  return r;
}

// Several tensors of several dtypes and ranks, with metadata.
struct sample {
  std::array<float, 6> w{1.f, -2.f, 3.5f, 0.f, 1e-3f, -7.25f};
  std::array<float, 3> b{0.5f, 0.25f, -0.125f};
  std::array<std::int8_t, 5> q{-128, -1, 0, 1, 127};
  std::int32_t count = 42;
  std::array<std::byte, 4> bf16{std::byte{0x80}, std::byte{0x3f}, std::byte{0x00}, std::byte{0xc0}};
  weight_set set;
  std::vector<tensor_data> tensors;
  safetensors_metadata metadata{{"format", "pt"}, {"note", "quote \" backslash \\ newline \n \xc3\xa9"}};

  sample() {
    set.add("layer.w", w, {2, 3})
        .add("layer.b", b, {3})
        .add("q", dtype::i8, std::as_bytes(std::span(q)), {5})
        .add("count", dtype::i32, std::as_bytes(std::span(&count, 1)), {})
        .add("empty", std::span<const float>{}, {0, 4});
    tensors.assign(set.tensors().begin(), set.tensors().end());
    tensors.push_back(tensor_data{"half", "BF16", std::nullopt, {2}, bf16});
  }
  byte_vector file() const { return to_safetensors(tensors, metadata); }
};

void check_matches(const safetensors_file& f, const sample& s) {
  REQUIRE(f.tensors().size() == s.tensors.size());
  for (std::size_t i = 0; i < s.tensors.size(); ++i) {
    const tensor_data& want = s.tensors[i];
    const tensor_data* got = f.find(want.name);
    REQUIRE(got != nullptr);
    CHECK(f.tensors()[i].name == want.name);
    CHECK(got->dtype_name == want.dtype_name);
    CHECK(got->type == want.type);
    CHECK(got->dims == want.dims);
    REQUIRE(got->bytes.size() == want.bytes.size());
    CHECK(std::equal(got->bytes.begin(), got->bytes.end(), want.bytes.begin()));
  }
  CHECK(f.metadata() == s.metadata);
}

}  // namespace

TEST_CASE("safetensors: write then read several tensors") {
  const sample s;
  const byte_vector file = s.file();
  const std::uint64_t header_len = detail::read_le64(file.data());
  CHECK(header_len % 8 == 0);
  CHECK(file.size() == 8 + header_len + 24 + 12 + 5 + 4 + 0 + 4);

  safetensors_file f = parse_safetensors(file);
  CHECK(f.origin() == "<memory>");
  check_matches(f, s);
  CHECK(floats_of(*f.find("layer.w")) == std::vector<float>(s.w.begin(), s.w.end()));
  CHECK(f.find("layer.w")->type == dtype::f32);
  CHECK(f.find("half")->type == std::nullopt);
  CHECK(f.find("count")->dims.empty());
  CHECK(f.find("empty")->dims == std::vector<std::int64_t>{0, 4});
  CHECK(f.find("missing") == nullptr);
  // The data section starts 8-aligned, so the first tensor's data is aligned within the buffer.
  CHECK(reinterpret_cast<std::uintptr_t>(f.find("layer.w")->bytes.data()) % 8 == 0);

  // The parsed file serializes back to the same bytes.
  CHECK(to_safetensors(f.tensors(), f.metadata()) == file);

  // Moving keeps the tensors pointing at valid data.
  const safetensors_file moved = std::move(f);
  CHECK(floats_of(*moved.find("layer.b")) == std::vector<float>(s.b.begin(), s.b.end()));
}

TEST_CASE("safetensors: save and load through a file") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("partita_sf_" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  const sample s;

  const fs::path path = dir / "model.safetensors";
  save_safetensors(path, s.tensors, s.metadata);
  const safetensors_file f = load_safetensors(path);
  CHECK(f.origin() == path.string());
  check_matches(f, s);

  const fs::path missing = dir / "missing.safetensors";
  std::string what;
  try {
    load_safetensors(missing);
  } catch (const partita::error& e) {
    what = e.what();
  }
  CHECK(contains(what, missing.string()));

  CHECK_THROWS_AS(load_safetensors(dir), partita::error);
  CHECK_THROWS_AS(save_safetensors(dir / "no" / "such" / "dir.safetensors", s.tensors), partita::error);
  fs::remove_all(dir);
}

TEST_CASE("safetensors: a file written byte by byte in the reference layout") {
  // {"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} is 54 bytes, padded to 56 with spaces,
  // then the floats 1.0 and -2.5.
  const std::string_view header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}  )";
  REQUIRE(header.size() == 56);
  byte_vector file{std::byte{56}, std::byte{0}, std::byte{0}, std::byte{0},
                   std::byte{0},  std::byte{0}, std::byte{0}, std::byte{0}};
  for (char c : header) file.push_back(static_cast<std::byte>(c));
  for (int b : {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0}) file.push_back(static_cast<std::byte>(b));

  const safetensors_file f = parse_safetensors(file, "hand.safetensors");
  REQUIRE(f.tensors().size() == 1);
  const tensor_data& a = f.tensors()[0];
  CHECK(a.name == "a");
  CHECK(a.dtype_name == "F32");
  CHECK(a.type == dtype::f32);
  CHECK(a.dims == std::vector<std::int64_t>{2});
  CHECK(floats_of(a) == std::vector<float>{1.0f, -2.5f});
  CHECK(f.metadata().empty());

  // Our writer produces exactly these bytes.
  const std::array<float, 2> values{1.0f, -2.5f};
  weight_set w;
  w.add("a", values, {2});
  CHECK(to_safetensors(w.tensors()) == file);
}

TEST_CASE("safetensors: whitespace, escapes and metadata in a hand-written header") {
  const std::string header =
      "\r\n { \"__metadata__\" : { \"k\\u00e9\" : \"v\\t\\\"\\/\" } ,\n"
      "  \"b\\u00fc\\ud83d\\ude00\" : { \"shape\" : [ 3 ] , \"dtype\" : \"I8\" , \"data_offsets\" : [ 0 , 3 ],"
      " \"future\": {\"x\": [true, false, null, -1.5e3]} } }\t";
  const safetensors_file f = parse_safetensors(make_file(header, 3));
  REQUIRE(f.metadata().size() == 1);
  CHECK(f.metadata()[0].first == "k\xc3\xa9");
  CHECK(f.metadata()[0].second == "v\t\"/");
  const tensor_data* t = f.find("b\xc3\xbc\xf0\x9f\x98\x80");
  REQUIRE(t != nullptr);
  CHECK(t->type == dtype::i8);
  CHECK(t->bytes.size() == 3);
}

TEST_CASE("safetensors: dtypes unknown to Partita are kept") {
  const safetensors_file f = parse_safetensors(make_file(
      R"({"h":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"x":{"dtype":"X99","shape":[3],"data_offsets":[4,5]}})",
      5));
  CHECK(f.find("h")->type == std::nullopt);
  CHECK(f.find("h")->dtype_name == "BF16");
  CHECK(f.find("x")->type == std::nullopt);
  CHECK(f.find("x")->bytes.size() == 1);
}

TEST_CASE("weight_set: add, find, duplicates and sizes") {
  const std::array<float, 6> w{1, 2, 3, 4, 5, 6};
  const std::array<float, 2> b{7, 8};
  const std::array<std::int64_t, 1> b_dims{2};
  weight_set set;
  set.add("w", w, {2, 3}).add("b", b, std::span<const std::int64_t>(b_dims));
  CHECK(set.origin() == "in-memory weight set");
  REQUIRE(set.tensors().size() == 2);
  CHECK(set.tensors()[0].name == "w");
  const tensor_data* t = set.find("w");
  REQUIRE(t != nullptr);
  CHECK(t->type == dtype::f32);
  CHECK(t->dtype_name == "F32");
  CHECK(t->dims == std::vector<std::int64_t>{2, 3});
  CHECK(static_cast<const void*>(t->bytes.data()) == static_cast<const void*>(w.data()));  // not copied
  CHECK(t->bytes.size() == 24);
  CHECK(set.find("b")->dims == std::vector<std::int64_t>{2});
  CHECK(set.find("nope") == nullptr);

  CHECK_THROWS_WITH_AS(set.add("w", b, {2}), doctest::Contains("'w'"), partita::error);
  CHECK_THROWS_WITH_AS(set.add("c", w, {2, 2}), doctest::Contains("needs 16 bytes, got 24"), partita::error);
  CHECK_THROWS_WITH_AS(set.add("d", w, {-1, 6}), doctest::Contains("'d'"), partita::error);
  CHECK(set.tensors().size() == 2);

  const std::array<std::int8_t, 3> q{1, 2, 3};
  set.add("q", dtype::i8, std::as_bytes(std::span(q)), {3});
  CHECK(set.find("q")->type == dtype::i8);
  CHECK(set.find("q")->dtype_name == "I8");
}

TEST_CASE("safetensors writer rejects inconsistent tensors") {
  const std::array<float, 2> v{1, 2};
  const auto bytes = std::as_bytes(std::span(v));
  std::vector<tensor_data> ts{{"a", "F32", dtype::f32, {2}, bytes}, {"a", "F32", dtype::f32, {2}, bytes}};
  CHECK_THROWS_WITH_AS(to_safetensors(ts), doctest::Contains("duplicate tensor 'a'"), partita::error);
  ts.resize(1);
  ts[0].dims = {3};
  CHECK_THROWS_WITH_AS(to_safetensors(ts), doctest::Contains("needs 12 bytes, got 8"), partita::error);
  ts[0] = {"__metadata__", "F32", dtype::f32, {2}, bytes};
  CHECK_THROWS_AS(to_safetensors(ts), partita::error);
  ts[0] = {"a", "F16", dtype::f32, {2}, bytes};
  CHECK_THROWS_WITH_AS(to_safetensors(ts), doctest::Contains("disagrees"), partita::error);
  ts[0] = {"a", "", dtype::f32, {2}, bytes};
  CHECK(parse_safetensors(to_safetensors(ts)).find("a")->dtype_name == "F32");
  CHECK_THROWS_AS(to_safetensors(ts, {{"k", "1"}, {"k", "2"}}), partita::error);
}

TEST_CASE("safetensors: every truncation of a valid file is rejected") {
  const byte_vector file = sample{}.file();
  for (std::size_t len = 0; len < file.size(); ++len) {
    CAPTURE(len);
    const std::string what = error_of(byte_vector(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(len)));
    CHECK(contains(what, "bad.safetensors: "));
  }
  CHECK(contains(error_of(byte_vector(file.begin(), file.begin() + 5)), "file is 5 bytes"));
  const std::string cut = error_of(byte_vector(file.begin(), file.begin() + 20));
  CHECK(contains(cut, "header length " + std::to_string(detail::read_le64(file.data()))));
  CHECK(contains(cut, "12 bytes"));
}

TEST_CASE("safetensors: each malformation is rejected with a precise message") {
  struct bad_case {
    const char* what;
    byte_vector bytes;
    std::vector<std::string> message_parts;
  };
  const auto entry = [](std::string_view shape, std::string_view offsets, std::string_view dtype = "F32") {
    return std::string(R"({"w":{"dtype":")") + std::string(dtype) + R"(","shape":)" + std::string(shape) +
           R"(,"data_offsets":)" + std::string(offsets) + "}}";
  };
  byte_vector huge_len = make_file("{}", 4);
  huge_len[7] = std::byte{0x40};  // 2^62 + 2
  byte_vector no_room = make_file("{}", 12);
  no_room[0] = std::byte{100};

  std::vector<bad_case> cases{
      {"short file", byte_vector(5), {"file is 5 bytes"}},
      {"header longer than file", no_room, {"header length 100", "14 bytes"}},
      {"absurd header length", huge_len, {"header length 4611686018427387906", "6 bytes"}},
      {"unterminated JSON", make_file(R"({"w":)"), {"malformed JSON", "byte 5 of the header", "file offset 13"}},
      {"trailing comma", make_file(R"({"a":{},})"), {"malformed JSON", "byte 8"}},
      {"garbage after the object", make_file("{} x"), {"malformed JSON", "byte 3"}},
      {"NUL padding", make_file(std::string("{}\0\0", 4)), {"malformed JSON", "byte 2"}},
      {"leading zero", make_file(entry("[01]", "[0,4]"), 4), {"malformed JSON", "leading zero"}},
      {"bad escape", make_file(R"({"\x":1})"), {"malformed JSON", "escape"}},
      {"lone surrogate", make_file(R"({"\udc00":1})"), {"malformed JSON", "surrogate"}},
      {"control character", make_file("{\"a\nb\":1}"), {"malformed JSON", "control character"}},
      {"invalid UTF-8", make_file("{\"\xff\":1}"), {"malformed JSON", "UTF-8"}},
      {"overlong UTF-8", make_file("{\"\xc0\xaf\":1}"), {"malformed JSON", "UTF-8"}},
      {"bad literal", make_file(R"({"a":nul})"), {"malformed JSON", "null"}},
      {"deep nesting", make_file(std::string(100000, '[')), {"malformed JSON", "nesting deeper than 64"}},
      {"header is an array", make_file("[]"), {"expected a JSON object"}},
      {"entry not an object", make_file(R"({"w":1})"), {"tensor 'w'", "entry is 1"}},
      {"missing dtype", make_file(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 4), {"tensor 'w'", "\"dtype\""}},
      {"missing shape", make_file(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", 4), {"tensor 'w'", "\"shape\""}},
      {"missing data_offsets", make_file(R"({"w":{"dtype":"F32","shape":[1]}})", 4),
       {"tensor 'w'", "\"data_offsets\""}},
      {"dtype given twice", make_file(R"({"w":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4),
       {"tensor 'w'", "\"dtype\" appears twice"}},
      {"dtype is a number", make_file(R"({"w":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})", 4),
       {"tensor 'w'", "\"dtype\" is 4"}},
      {"shape not an array", make_file(entry("7", "[0,4]"), 4), {"tensor 'w'", "\"shape\" is 7"}},
      {"negative dimension", make_file(entry("[2,-3]", "[0,4]"), 4), {"tensor 'w'", "dimension 1 is -3"}},
      {"fractional dimension", make_file(entry("[2.5]", "[0,4]"), 4), {"tensor 'w'", "dimension 0 is 2.5"}},
      {"exponent dimension", make_file(entry("[1e3]", "[0,4]"), 4), {"tensor 'w'", "dimension 0 is 1e3"}},
      {"huge dimension", make_file(entry("[99999999999999999999]", "[0,4]"), 4),
       {"tensor 'w'", "99999999999999999999"}},
      {"element count overflow", make_file(entry("[4294967296,4294967296,16]", "[0,4]"), 4),
       {"tensor 'w'", "[4294967296, 4294967296, 16]", "63 bits"}},
      {"three offsets", make_file(entry("[1]", "[0,4,8]"), 8), {"tensor 'w'", "found [0, 4, 8]"}},
      {"offsets not integers", make_file(entry("[1]", "[0,\"4\"]"), 4), {"tensor 'w'", "found [0, \"4\"]"}},
      {"negative offset", make_file(entry("[1]", "[-4,0]"), 4), {"tensor 'w'", "found [-4, 0]"}},
      {"decreasing offsets", make_file(entry("[1]", "[8,4]"), 8), {"tensor 'w'", "[8, 4] decrease"}},
      {"offsets beyond data", make_file(entry("[4]", "[0,16]"), 8),
       {"tensor 'w'", "[0, 16]", "data section of 8 bytes"}},
      {"byte length mismatch", make_file(entry("[3]", "[0,8]"), 8),
       {"tensor 'w'", "F32 shape [3] needs 12 bytes", "hold 8"}},
      {"byte length mismatch, dtype unknown to Partita", make_file(entry("[3]", "[0,8]", "F64"), 8),
       {"tensor 'w'", "F64 shape [3] needs 24 bytes", "hold 8"}},
      {"duplicate tensor names",
       make_file(R"({"w":{"dtype":"I8","shape":[1],"data_offsets":[0,1]},"w":{"dtype":"I8","shape":[1],"data_offsets":[1,2]}})",
                 2),
       {"duplicate tensor 'w'"}},
      {"metadata not an object", make_file(R"({"__metadata__":[]})"), {"__metadata__ is an array"}},
      {"metadata value not a string", make_file(R"({"__metadata__":{"k":1}})"), {"__metadata__ key 'k'", "is 1"}},
      {"metadata twice", make_file(R"({"__metadata__":{},"__metadata__":{}})"), {"__metadata__ appears twice"}},
  };
  CHECK(cases.size() >= 15);
  for (auto& c : cases) {
    const std::string name = c.what;
    CAPTURE(name);
    const std::string what = error_of(std::move(c.bytes));
    CAPTURE(what);
    CHECK(contains(what, "bad.safetensors: "));
    for (const auto& part : c.message_parts) CHECK(contains(what, part));
  }
}

TEST_CASE("safetensors: header length above the limit is rejected before parsing") {
  byte_vector file = make_file("{}", static_cast<std::size_t>(detail::safetensors_max_header));
  file[0] = std::byte{0x01};
  file[1] = std::byte{0xe1};
  file[2] = std::byte{0xf5};
  file[3] = std::byte{0x05};  // 100'000'001
  const std::string what = error_of(std::move(file));
  CHECK(contains(what, "header length 100000001 exceeds the limit of 100000000 bytes"));
}

TEST_CASE("json: nesting depth limit") {
  CHECK_NOTHROW(detail::json::parse(std::string(64, '[') + std::string(64, ']')));
  CHECK_THROWS_AS(detail::json::parse(std::string(65, '[') + std::string(65, ']')), detail::json::syntax_error);
  CHECK(detail::json::parse("-0").type == detail::json::value::kind::integer);
  CHECK(detail::json::parse("9223372036854775807").integer == INT64_MAX);
  CHECK(detail::json::parse("9223372036854775808").type == detail::json::value::kind::number);
  CHECK_THROWS_AS(detail::json::parse("1."), detail::json::syntax_error);
  CHECK_THROWS_AS(detail::json::parse("-"), detail::json::syntax_error);
  CHECK_THROWS_AS(detail::json::parse("\"\\ud800\""), detail::json::syntax_error);
  CHECK_THROWS_AS(detail::json::parse("\"\xed\xa0\x80\""), detail::json::syntax_error);  // encoded surrogate
  CHECK_THROWS_AS(detail::json::parse(""), detail::json::syntax_error);
}

TEST_CASE("safetensors: random byte flips either parse or throw partita::error") {
  const byte_vector file = sample{}.file();
  const std::size_t header_end = 8 + static_cast<std::size_t>(detail::read_le64(file.data()));
  std::mt19937 rng(20240611);
  int parsed = 0, rejected = 0;
  for (int round = 0; round < 20000; ++round) {
    byte_vector b = file;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      // Mostly the length field and header, where the parser's decisions are.
      const std::size_t limit = rng() % 10 < 9 ? header_end : b.size();
      const std::size_t at = rng() % limit;
      b[at] = rng() % 2 ? static_cast<std::byte>(rng()) : b[at] ^ static_cast<std::byte>(1u << (rng() % 8));
    }
    if (rng() % 8 == 0) b.resize(rng() % (b.size() + 1));
    try {
      const safetensors_file f = parse_safetensors(std::move(b));
      unsigned sum = 0;
      for (const auto& t : f.tensors())
        for (std::byte x : t.bytes) sum += std::to_integer<unsigned>(x);
      (void)sum;
      ++parsed;
    } catch (const partita::error&) {
      ++rejected;
    }
  }
  CHECK(parsed > 0);
  CHECK(rejected > 0);
  MESSAGE("parsed ", parsed, ", rejected ", rejected);
}
