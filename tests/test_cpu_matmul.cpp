// cpu matmul: the run-time GEMM (detail::cpu::matmul) against a naive double-accumulating loop
// over shapes that exercise every tail (rows, columns and depths off the tile sizes, several
// depth passes, row and panel blocks), numpy broadcasting of the batch dims, the four transpose
// combinations, B packed ahead, one and two threads, and NaN and ±Inf propagation; then `matmul`
// models compiled for cpu against the reference backend (the conformance law's check), with
// activations and weights on either side, and fused with a bias and an activation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <laws/conformance.hpp>
#include <partita/backends/cpu/detail/gemm/matmul.hpp>

using namespace partita;
namespace cpu_detail = partita::detail::cpu;

namespace {

// Numpy's matmul, written from the shapes alone: the batch dims broadcast from the back, op(X)
// reads X transposed. Also returns Σ|a·b| per output, the scale of its rounding error.
struct naive_result {
  shape out;
  std::vector<double> value, scale;
};

naive_result naive_matmul(const std::vector<float>& a, const shape& as, bool ta, const std::vector<float>& b,
                          const shape& bs, bool tb) {
  const std::int64_t m = ta ? as.back(0) : as.back(1), k = ta ? as.back(1) : as.back(0);
  const std::int64_t n = tb ? bs.back(1) : bs.back(0);
  const int r = std::max(as.rank, bs.rank) - 2;
  naive_result res;
  res.out.rank = r + 2;
  for (int i = 0; i < r; ++i) {
    const int ia = as.rank - 2 - r + i, ib = bs.rank - 2 - r + i;
    res.out.dims[static_cast<std::size_t>(i)] = std::max(ia >= 0 ? as[ia] : 1, ib >= 0 ? bs[ib] : 1);
  }
  res.out.dims[static_cast<std::size_t>(r)] = m;
  res.out.dims[static_cast<std::size_t>(r + 1)] = n;
  const std::int64_t batch = res.out.elements() / (m * n);
  res.value.assign(static_cast<std::size_t>(res.out.elements()), 0.0);
  res.scale = res.value;
  for (std::int64_t bi = 0; bi < batch; ++bi) {
    // The output batch index in digits, then each operand's matrix (digit 0 where its dim is 1).
    std::int64_t rest = bi, am = 0, bm = 0, a_mul = 1, b_mul = 1;
    for (int i = r - 1; i >= 0; --i) {
      const std::int64_t d = res.out[i], digit = rest % d;
      rest /= d;
      const int ia = as.rank - 2 - r + i, ib = bs.rank - 2 - r + i;
      const std::int64_t da = ia >= 0 ? as[ia] : 1, db = ib >= 0 ? bs[ib] : 1;
      am += (da == 1 ? 0 : digit) * a_mul;
      bm += (db == 1 ? 0 : digit) * b_mul;
      a_mul *= da;
      b_mul *= db;
    }
    const float* A = a.data() + am * m * k;
    const float* B = b.data() + bm * k * n;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double s = 0, sa = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          const double x = static_cast<double>(ta ? A[p * m + i] : A[i * k + p]) *
                           static_cast<double>(tb ? B[j * k + p] : B[p * n + j]);
          s += x;
          sa += std::abs(x);
        }
        const std::size_t at = static_cast<std::size_t>((bi * m + i) * n + j);
        res.value[at] = s;
        res.scale[at] = sa;
      }
  }
  return res;
}

std::vector<float> random_values(const shape& s, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<std::size_t>(s.elements()));
  for (float& x : v) x = dist(gen);
  return v;
}

cpu_detail::state& state_with(int threads) {
  static cpu_detail::state one, two;
  static const bool once = [] {
    one.set_threads(1);
    two.set_threads(2);
    return true;
  }();
  (void)once;
  return threads == 1 ? one : two;
}

std::string describe(const shape& as, bool ta, const shape& bs, bool tb, int threads, bool packed) {
  return to_string(as) + (ta ? "ᵀ" : "") + " · " + to_string(bs) + (tb ? "ᵀ" : "") + ", " + std::to_string(threads) +
         " thread(s)" + (packed ? ", B packed" : "");
}

// Runs the cpu matmul and returns the worst mismatch against the naive loop, as a multiple of the
// rounding error allowed (≤ 1 passes); a NaN or ±Inf expected must come out exactly.
double mismatch(const std::vector<float>& a, const shape& as, bool ta, const std::vector<float>& b, const shape& bs,
                bool tb, int threads, bool packed) {
  const cpu_detail::matmul_geometry g = cpu_detail::make_matmul_geometry(as, bs, ta, tb);
  REQUIRE(g.ok);
  const naive_result want = naive_matmul(a, as, ta, b, bs, tb);
  cpu_detail::state& st = state_with(threads);
  st.need_scratch(0, cpu_detail::matmul_scratch_floats(g));
  std::vector<float> packed_b;
  if (packed) {
    packed_b.assign(cpu_detail::matmul_packed_b_floats(g), -7.f);
    cpu_detail::pack_matmul_b(g, b.data(), packed_b.data());
  }
  // Guard floats on both sides of C: nothing outside it may be written.
  constexpr std::size_t guard = 64;
  std::vector<float> c(want.value.size() + 2 * guard, 12345.f);
  cpu_detail::matmul(st, g, a.data(), b.data(), c.data() + guard, packed ? packed_b.data() : nullptr);
  double worst = 0;
  for (std::size_t i = 0; i < guard; ++i) {
    if (c[i] != 12345.f || c[c.size() - 1 - i] != 12345.f) return 1e30;
  }
  for (std::size_t i = 0; i < want.value.size(); ++i) {
    const double got = c[guard + i], w = want.value[i];
    double d = 0;
    if (std::isnan(w)) {
      d = std::isnan(got) ? 0 : 1e30;
    } else if (std::isinf(w)) {
      d = got == w ? 0 : 1e30;
    } else {
      // fp32 accumulation: a few ulps of Σ|a·b| per term, with room for the depth.
      const double allowed = 1e-6 * (want.scale[i] + 1e-3) * std::sqrt(static_cast<double>(g.k) + 1.0) * 4;
      d = std::abs(got - w) / allowed;
      if (!std::isfinite(d)) d = 1e30;
    }
    worst = std::max(worst, d);
  }
  return worst;
}

void check(const shape& as, bool ta, const shape& bs, bool tb, unsigned seed = 1) {
  const std::vector<float> a = random_values(as, seed), b = random_values(bs, seed + 100);
  for (int threads : {1, 2})
    for (bool packed : {false, true}) {
      INFO(describe(as, ta, bs, tb, threads, packed));
      CHECK(mismatch(a, as, ta, b, bs, tb, threads, packed) <= 1.0);
    }
}

// A 2-D or 3-D operand of op-shape [rows × cols], stored transposed when `t`.
shape operand(std::int64_t batch, std::int64_t rows, std::int64_t cols, bool t) {
  if (batch == 0) return t ? shape{2, {cols, rows}} : shape{2, {rows, cols}};
  return t ? shape{3, {batch, cols, rows}} : shape{3, {batch, rows, cols}};
}

}  // namespace

TEST_CASE("cpu matmul: tails of rows, columns and depths, every transpose combination") {
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    for (int m : {1, 2, 3, 5, 7, 17, 63, 65, 127})
      for (int n : {1, 3, 17, 63, 65, 127})
        for (int k : {1, 3, 17, 65, 127})
          check(operand(0, m, k, ta), ta, operand(0, k, n, tb), tb, static_cast<unsigned>(m * n + k));
  }
}

TEST_CASE("cpu matmul: several depth passes, row blocks and panel blocks") {
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    check(operand(0, 33, 520, ta), ta, operand(0, 520, 40, tb), tb);         // three depth passes
    check(operand(0, 301, 70, ta), ta, operand(0, 70, 33, tb), tb);          // rows past one A block
    check(operand(0, 9, 20, ta), ta, operand(0, 20, 1100, tb), tb);          // columns past one B buffer
    check(operand(3, 128, 64, ta), ta, operand(3, 64, 128, tb), tb);         // attention-like, 3 heads
    check(operand(2, 7, 300, ta), ta, operand(0, 300, 129, tb), tb);         // B shared by the batch
  }
}

TEST_CASE("cpu matmul: the batch dims broadcast as numpy's") {
  check(shape{4, {2, 3, 5, 7}}, false, shape{2, {7, 4}}, false);  // folds into 30 rows
  check(shape{4, {2, 3, 7, 5}}, true, shape{2, {4, 7}}, true);
  check(shape{2, {5, 7}}, false, shape{3, {3, 7, 4}}, false);
  check(shape{2, {7, 5}}, true, shape{3, {3, 4, 7}}, true);
  check(shape{4, {2, 1, 5, 7}}, false, shape{4, {1, 3, 7, 4}}, false);
  check(shape{4, {2, 1, 65, 17}}, false, shape{3, {3, 63, 17}}, true);
  check(shape{3, {3, 64, 40}}, false, shape{4, {2, 1, 40, 70}}, false);
  check(shape{5, {2, 1, 2, 9, 11}}, true, shape{4, {3, 1, 9, 6}}, false);

  const cpu_detail::matmul_geometry g =
      cpu_detail::make_matmul_geometry(shape{4, {2, 3, 5, 7}}, shape{2, {7, 4}}, false, false);
  CHECK(g.batch == 1);
  CHECK(g.m == 30);
  CHECK_FALSE(cpu_detail::make_matmul_geometry(shape{3, {2, 5, 7}}, shape{3, {3, 7, 4}}, false, false).ok);
  CHECK_FALSE(cpu_detail::make_matmul_geometry(shape{2, {5, 7}}, shape{2, {6, 4}}, false, false).ok);
}

TEST_CASE("cpu matmul: NaN and ±Inf propagate as in the naive loop") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    for (int m : {5, 13, 64}) {
      const int n = 37, k = 29;
      const shape as = operand(2, m, k, ta), bs = operand(2, k, n, tb);
      std::vector<float> a = random_values(as, 3), b = random_values(bs, 4);
      auto at = [&](std::vector<float>& x, bool tr, int rows, int cols, int bi, int i, int j) -> float& {
        const std::size_t off = static_cast<std::size_t>(bi) * static_cast<std::size_t>(rows * cols);
        return x[off + static_cast<std::size_t>(tr ? j * rows + i : i * cols + j)];
      };
      at(a, ta, m, k, 1, m - 1, 3) = nan;  // row m-1 of C[1] is NaN
      at(a, ta, m, k, 0, 2, 7) = inf;      // row 2 of C[0]: ±Inf, or NaN where the signs meet
      at(b, tb, k, n, 0, 5, n - 1) = nan;  // column n-1 of C[0] is NaN
      at(b, tb, k, n, 1, 0, 4) = -inf;
      for (int threads : {1, 2})
        for (bool packed : {false, true}) {
          INFO(describe(as, ta, bs, tb, threads, packed));
          CHECK(mismatch(a, as, ta, b, bs, tb, threads, packed) <= 1.0);
        }
      // The NaN row stays NaN in every column.
      const naive_result want = naive_matmul(a, as, ta, b, bs, tb);
      for (int j = 0; j < n; ++j) CHECK(std::isnan(want.value[static_cast<std::size_t>((m + m - 1) * n + j)]));
    }
  }
}

namespace matmul_nets {
using namespace partita;
template <std::int64_t... D>
using a = input<"a", f32, D...>;
template <std::int64_t... D>
using b = input<"b", f32, D...>;
template <std::int64_t... D>
using w = weight<"w", f32, D...>;
constexpr matmul_attrs tb{.transpose_b = true}, ta{.transpose_a = true}, tab{.transpose_a = true, .transpose_b = true};

// Attention: the scores Q·Kᵀ, then the probabilities times V, per head.
using scores = model<matmul<a<1, 4, 128, 64>, b<1, 4, 128, 64>, tb>>;
using context = model<matmul<a<1, 4, 128, 128>, b<1, 4, 128, 64>>>;
using attention = model<matmul<matmul<a<2, 3, 17, 16>, b<2, 3, 17, 16>, tb>, input<"v", f32, 2, 3, 17, 9>>>;
using small_tails = model<matmul<a<3, 7, 5>, b<3, 5, 13>>>;
using both_transposed = model<matmul<a<2, 33, 6>, b<2, 19, 33>, tab>>;
using a_transposed = model<matmul<a<65, 63>, b<65, 17>, ta>>;
using broadcast_b = model<matmul<a<2, 3, 5, 7>, b<7, 4>>>;
using broadcast_a = model<matmul<a<5, 7>, b<3, 7, 4>>>;
using broadcast_both = model<matmul<a<2, 1, 5, 7>, b<3, 4, 7>, tb>>;
// Weights: B packed at bind (shared by the batch, one per batch matrix, broadcast, transposed
// like dense's), or A.
using dense_like = model<matmul<a<1, 128, 256>, w<100, 256>, tb>>;
using weight_b = model<matmul<a<2, 5, 7>, w<7, 4>>>;
using weight_b_batched = model<matmul<a<3, 9, 8>, w<3, 8, 6>>>;
using weight_b_broadcast = model<matmul<a<2, 3, 9, 8>, w<3, 8, 6>>>;
using weight_b_transposed_a = model<matmul<a<2, 16, 9>, w<16, 10>, ta>>;
using weight_a = model<matmul<w<5, 7>, b<3, 7, 4>>>;
using weight_both = model<matmul<w<6, 7>, weight<"v", f32, 4, 7>, tb>>;
// Fused: a bias along the last axis, then an activation, applied as the last depth pass is
// stored; B a weight (packed) or an activation, batches broadcast, depths over one pass.
template <std::int64_t N>
using bias = weight<"bias", f32, N>;
using bias_weight_b = model<bias_add<matmul<a<2, 5, 7>, w<7, 37>>, bias<37>, -1>>;
using bias_gelu = model<gelu<bias_add<matmul<a<1, 33, 64>, w<100, 64>, tb>, bias<100>, 2>>>;
using bias_relu_activations = model<relu<bias_add<matmul<a<2, 3, 9, 8>, b<3, 8, 6>>, bias<6>, -1>>>;
using bias_tanh_deep = model<tanh_<bias_add<matmul<a<9, 700>, b<700, 19>>, bias<19>, -1>>>;
using bias_clip_transposed = model<clip<bias_add<matmul<a<2, 16, 9>, w<16, 10>, ta>, bias<10>, -1>, -0.5f, 0.5f>>;
using bias_weight_a = model<bias_add<matmul<w<5, 7>, b<3, 7, 4>>, bias<4>, -1>>;
}  // namespace matmul_nets

// The fused forms are one step each; a bias along another axis is not fused.
static_assert(count_functions<compiled<matmul_nets::bias_gelu, cpu>::module, "cpu.matmul_bias_act"> == 1);
static_assert(compiled<matmul_nets::bias_gelu, cpu>::num_steps == 1);
static_assert(count_functions<compiled<matmul_nets::bias_weight_b, cpu>::module, "cpu.matmul_bias"> == 1);
static_assert(count_functions<compiled<matmul_nets::bias_relu_activations, cpu>::module, "cpu.matmul_bias_act"> == 1);
static_assert(compiled<model<bias_add<matmul<matmul_nets::a<2, 6, 5>, matmul_nets::w<5, 6>>, matmul_nets::bias<6>, 1>>,
                       cpu>::num_steps == 2);

namespace {
using matmul_models = laws::model_list<
    laws::model_group<"matmul of activations", matmul_nets::scores, matmul_nets::context, matmul_nets::attention,
                      matmul_nets::small_tails, matmul_nets::both_transposed, matmul_nets::a_transposed,
                      matmul_nets::broadcast_b, matmul_nets::broadcast_a, matmul_nets::broadcast_both>,
    laws::model_group<"matmul with weights", matmul_nets::dense_like, matmul_nets::weight_b,
                      matmul_nets::weight_b_batched, matmul_nets::weight_b_broadcast,
                      matmul_nets::weight_b_transposed_a, matmul_nets::weight_a, matmul_nets::weight_both>,
    laws::model_group<"matmul fused with a bias and an activation", matmul_nets::bias_weight_b, matmul_nets::bias_gelu,
                      matmul_nets::bias_relu_activations, matmul_nets::bias_tanh_deep,
                      matmul_nets::bias_clip_transposed, matmul_nets::bias_weight_a>>;
}  // namespace

static_assert(compiled<matmul_nets::scores, cpu>::num_steps == 1);

TEST_CASE("cpu matmul models agree with the reference backend, on one and two threads, with NaN and ±Inf") {
  laws::conformance<cpu>::check<matmul_models>();
}
