// Names at the executable's edges: the outputs' names (`output<"name", X>`, `output<k>` by
// default) through every flow, `run` by name and its checks, and the tensors `bind` leaves unused.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <partita/partita.hpp>

using namespace partita;

namespace {

using x = input<"x", f32, 1, 4>;
using y = input<"y", f32, 1, 4>;
using scale = weight<"scale", f32, 1, 4>;
// Three outputs: named, unnamed (so `output1`), named; the last also reads a weight.
using net = model<output<"sum", add<x, y>>, relu<subtract<x, y>>, output<"scaled", multiply<x, scale>>>;
using ref_exe = compiled<net, reference>;
using cpu_exe = compiled<net, cpu>;  // through the eager flow: composites, partitions, inlining

static_assert(ref_exe::num_outputs == 3);
static_assert(ref_exe::output(0).name == "sum" && ref_exe::output(1).name == "output1" && ref_exe::output(2).name == "scaled");
static_assert(cpu_exe::output(0).name == "sum" && cpu_exe::output(1).name == "output1" && cpu_exe::output(2).name == "scaled");
static_assert(compiled<partition<net, cpu>, cpu>::output(2).name == "scaled");
static_assert(compiled<model<relu<x>>, reference>::output(0).name == "output0");
// An output that is an input, or the same value twice under two names: each slot its own name.
static_assert(compiled<model<output<"copy", x>, output<"again", x>>, reference>::output(1).name == "again");

const std::vector<float> scale_values{2, 3, 4, 5};

weight_set weights() { return weight_set{}.add("scale", scale_values, {1, 4}); }

// The outputs of one positional run, to compare named runs with.
struct positional {
  std::vector<float> sum = std::vector<float>(4), diff = std::vector<float>(4), scaled = std::vector<float>(4);
};

template <class Exe>
positional run_positional(Exe& exe, const std::vector<float>& a, const std::vector<float>& b) {
  positional p;
  exe.run(a, b, p.sum, p.diff, p.scaled);
  return p;
}

}  // namespace

TEST_CASE("run by name matches run in model order, whatever the order of the names") {
  const std::vector<float> a{1, -2, 3, -4}, b{0.5f, 0.5f, -1, 1};
  ref_exe exe;
  exe.bind(weights());
  const positional want = run_positional(exe, a, b);
  CHECK(want.sum == std::vector<float>{1.5f, -1.5f, 2, -3});
  std::vector<float> sum(4), diff(4), scaled(4);
  exe.run({{"y", b}, {"x", std::span<const float>(a)}},
          {{"scaled", scaled}, {"output1", std::span<float>(diff)}, {"sum", tensor_view{sum.data(), shape_of<1, 4>}}});
  CHECK(sum == want.sum);
  CHECK(diff == want.diff);
  CHECK(scaled == want.scaled);

  cpu_exe fast;
  fast.bind(weights());
  std::vector<float> s2(4), d2(4), c2(4);
  fast.run({{"x", a}, {"y", b}}, {{"sum", s2}, {"output1", d2}, {"scaled", c2}});
  CHECK(s2 == want.sum);
  CHECK(d2 == want.diff);
  CHECK(c2 == want.scaled);
}

TEST_CASE("run by name names the tensor it cannot take, and runs nothing") {
  const std::vector<float> a{1, 2, 3, 4}, b{1, 1, 1, 1}, short_b{1, 1, 1};
  const std::vector<std::int64_t> ids{1, 2, 3, 4};
  ref_exe exe;
  exe.bind(weights());
  std::vector<float> sum(4, -7.f), diff(4, -7.f), scaled(4, -7.f), big(5, -7.f);
  const std::vector<float> untouched(4, -7.f);

  CHECK_THROWS_WITH_AS(exe.run({{"x", a}, {"z", b}}, {{"sum", sum}, {"output1", diff}, {"scaled", scaled}}),
                       "partita: run: the model has no input named 'z' (its inputs: 'x', 'y')", error);
  CHECK_THROWS_WITH_AS(exe.run({{"x", a}, {"y", b}}, {{"sum", sum}, {"logits", diff}, {"scaled", scaled}}),
                       "partita: run: the model has no output named 'logits' (its outputs: 'sum', 'output1', 'scaled')",
                       error);
  CHECK_THROWS_WITH_AS(exe.run({{"x", a}, {"y", b}, {"x", b}}, {{"sum", sum}, {"output1", diff}, {"scaled", scaled}}),
                       "partita: run: input 0 'x' (f32[1, 4]) is given twice", error);
  CHECK_THROWS_WITH_AS(exe.run({{"x", a}, {"y", b}}, {{"sum", sum}, {"output1", diff}, {"output1", scaled}}),
                       "partita: run: output 1 'output1' (f32[1, 4]) is given twice", error);
  CHECK_THROWS_WITH_AS(exe.run({{"x", a}, {"y", b}}, {{"sum", sum}, {"scaled", scaled}}),
                       "partita: run: output 1 'output1' (f32[1, 4]) is given no buffer", error);
  CHECK_THROWS_WITH_AS(exe.run({{"x", a}, {"y", short_b}}, {{"sum", sum}, {"output1", diff}, {"scaled", scaled}}),
                       "partita: run: input 1 'y' (f32[1, 4]): the buffer has 3 elements, expected 4", error);
  CHECK_THROWS_WITH_AS(exe.run({{"x", a}, {"y", b}}, {{"sum", sum}, {"output1", diff}, {"scaled", big}}),
                       "partita: run: output 2 'scaled' (f32[1, 4]): the buffer has 5 elements, expected 4", error);
  CHECK_THROWS_WITH_AS(exe.run({{"x", ids}, {"y", b}}, {{"sum", sum}, {"output1", diff}, {"scaled", scaled}}),
                       "partita: run: input 0 'x' (f32[1, 4]): the buffer holds i64 elements, expected f32", error);
  CHECK_THROWS_WITH_AS(exe.run({{"x", tensor_view{a.data(), shape_of<4>}}, {"y", b}},
                               {{"sum", sum}, {"output1", diff}, {"scaled", scaled}}),
                       "partita: run: input 0 'x' (f32[1, 4]): the view has shape [4], expected [1, 4]", error);
  // An output the model does not name is shown by position alone, as in a positional run.
  CHECK_THROWS_WITH_AS(exe.run({{"x", a}, {"y", b}}, {{"sum", sum}, {"output1", big}, {"scaled", scaled}}),
                       "partita: run: output 1 (f32[1, 4]): the buffer has 5 elements, expected 4", error);
  CHECK(sum == untouched);
  CHECK(diff == untouched);
  CHECK(scaled == untouched);

  // The executable is as it was: the next run works.
  exe.run({{"x", a}, {"y", b}}, {{"sum", sum}, {"output1", diff}, {"scaled", scaled}});
  CHECK(sum == std::vector<float>{2, 3, 4, 5});
}

TEST_CASE("bind reports the tensors of its source that the model does not read") {
  const std::vector<float> extra(3, 1.f), other(4, 9.f);
  ref_exe exe;
  exe.bind(weights());
  CHECK(exe.unused_weights().empty());

  exe.bind(weight_set{}.add("head.bias", extra, {3}).add("scale", scale_values, {1, 4}).add("embed", extra, {3}));
  CHECK(exe.unused_weights() == std::vector<std::string>{"head.bias", "embed"});

  // The same from a safetensors file.
  const weight_set set = weight_set{}.add("scale", scale_values, {1, 4}).add("decoder.w", extra, {3});
  const safetensors_file file = parse_safetensors(to_safetensors(set.tensors()), "ckpt.safetensors");
  exe.bind(file);
  CHECK(exe.unused_weights() == std::vector<std::string>{"decoder.w"});
  ref_exe moved(std::move(exe));
  CHECK(moved.unused_weights() == std::vector<std::string>{"decoder.w"});
}

TEST_CASE("bind with on_unused::reject names the unused tensors and keeps the previous weights") {
  const std::vector<float> a{1, 2, 3, 4}, b(4, 0.f), extra(3, 1.f), other(4, 9.f);
  ref_exe exe;
  exe.bind(weights(), on_unused::reject);
  CHECK(exe.unused_weights().empty());

  const weight_set set = weight_set{}.add("scale", other, {1, 4}).add("decoder.w", extra, {3});
  const safetensors_file file = parse_safetensors(to_safetensors(set.tensors()), "ckpt.safetensors");
  CHECK_THROWS_WITH_AS(exe.bind(file, on_unused::reject),
                       "partita: bind failed:\n  tensor 'decoder.w' of ckpt.safetensors: the model has no weight of "
                       "that name",
                       error);
  // A missing weight and an unused tensor (a renamed layer) are reported together.
  CHECK_THROWS_WITH_AS(
      exe.bind(weight_set{}.add("scales", other, {1, 4}), on_unused::reject),
      "partita: bind failed:\n  weight 'scale' (f32[1, 4]): not found in in-memory weight set\n  tensor 'scales' "
      "of in-memory weight set: the model has no weight of that name",
      error);
  CHECK(exe.bound());
  std::vector<float> sum(4), diff(4), scaled(4);
  exe.run(a, b, sum, diff, scaled);
  CHECK(scaled == std::vector<float>{2, 6, 12, 20});  // the first weights, not `other`

  // Past eight unused tensors, the rest are counted.
  weight_set many;
  many.add("scale", scale_values, {1, 4});
  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) names.push_back("t" + std::to_string(i));
  for (const std::string& n : names) many.add(n, extra, {3});
  try {
    exe.bind(many, on_unused::reject);
    FAIL("bind accepted unused tensors");
  } catch (const error& e) {
    const std::string m = e.what();
    CHECK(m.find("tensor 't7'") != std::string::npos);
    CHECK(m.find("tensor 't8'") == std::string::npos);
    CHECK(m.find("... and 2 more unused tensors") != std::string::npos);
  }
  exe.bind(many);
  CHECK(exe.unused_weights() == names);
}

namespace {
// A source that finds tensors but cannot list them.
struct lookup_only {
  weight_set set = weights();
  const tensor_data* find(std::string_view name) const { return set.find(name); }
  std::string_view origin() const { return "a lookup"; }
};
}  // namespace

TEST_CASE("a source that does not list its tensors binds, but cannot reject unused ones") {
  ref_exe exe;
  exe.bind(lookup_only{});
  CHECK(exe.unused_weights().empty());
  CHECK_THROWS_WITH_AS(exe.bind(lookup_only{}, on_unused::reject),
                       "partita: bind: a lookup does not list its tensors (no tensors()), so on_unused::reject cannot "
                       "check them",
                       error);
}
