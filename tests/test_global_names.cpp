// The naming rule of docs/ops.md: with every standard header included and `using namespace
// partita;` at global scope, a model names each op, leaf, pass and backend without
// qualification. A name that a header declares at global scope (a C library function, say) and
// that Partita also uses for a class template makes this file fail to compile, with both
// compilers. The printed op names keep their plain spelling.
#include <algorithm>
#include <any>
#include <array>
#include <atomic>
#include <bit>
#include <bitset>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <cfenv>
#include <cfloat>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <clocale>
#include <cmath>
#include <compare>
#include <complex>
#include <concepts>
#include <condition_variable>
#include <csetjmp>
#include <csignal>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuchar>
#include <cwchar>
#include <cwctype>
#include <deque>
#include <exception>
#include <filesystem>
#include <forward_list>
#include <fstream>
#include <functional>
#include <future>
#include <initializer_list>
#include <iomanip>
#include <ios>
#include <iostream>
#include <istream>
#include <iterator>
#include <limits>
#include <list>
#include <locale>
#include <map>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <new>
#include <numbers>
#include <numeric>
#include <optional>
#include <ostream>
#include <queue>
#include <random>
#include <ranges>
#include <ratio>
#include <regex>
#include <scoped_allocator>
#include <set>
#include <shared_mutex>
#include <span>
#include <sstream>
#include <stack>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <valarray>
#include <variant>
#include <vector>
#include <version>
// The C headers under their C names, which declare the same functions at global scope.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <doctest/doctest.h>

#include <partita/partita.hpp>

using namespace partita;

// Every op of docs/ops.md, each at least once, unqualified.
using x = input<"x", f32, 2, 3, 8, 8>;
using c = conv2d<x, weight<"w", f32, 4, 3, 3, 3>, {.padding = {1, 1}}>;
using b = bias_add<c, weight<"b", f32, 4>>;
using bn = batch_norm<b, weight<"g", f32, 4>, weight<"be", f32, 4>, weight<"m", f32, 4>, weight<"v", f32, 4>>;
using r6 = clip<bn, 0.f, 6.f>;
using mp = max_pool2d<r6, {.size = {2, 2}}>;
using ap = avg_pool2d<r6, {.size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}}>;
using gp = global_avg_pool2d<ap>;
using rz = resize<mp, 8, 8, {.mode = resize_mode::bilinear}>;
using up = conv_transpose2d<mp, weight<"t", f32, 4, 4, 2, 2>, {.stride = {2, 2}}>;
using d2s = depth_to_space<rz, 2>;
using s2d = space_to_depth<d2s, 2>;
using pooled = flatten<gp>;                                                     // [2, 4]
using fc = dense<pooled, weight<"fc", f32, 5, 4>>;                              // [2, 5]
using math = add<add<add<tanh_<fc>, sqrt_<abs_<fc>>>, add<exp_<neg<fc>>, log_<abs_<fc>>>>,
                 add<erf_<fc>, rsqrt<add<abs_<fc>, scalar<1.f>>>>>;
using acts = add<add<relu<fc>, sigmoid<fc>>, add<add<gelu<fc>, gelu_tanh<fc>>, add<silu<fc>, hardswish<fc>>>>;
using more = add<add<hardsigmoid<fc>, leaky_relu<fc>>, add<power<fc, 2.f>, prelu<fc, weight<"slope", f32, 5>>>>;
using arith = divide<subtract<multiply<math, acts>, more>, maximum<minimum<fc, scalar<3.f>>, literal<dims<5>, 1.f, 2.f, 3.f, 4.f, 5.f>>>;
using normed = rms_norm<layer_norm<arith, weight<"ln.g", f32, 5>, weight<"ln.b", f32, 5>>, weight<"rms.g", f32, 5>>;
using sm = softmax<normed>;
using mm = matmul<sm, sm, {.transpose_b = true}>;                             // [2, 2]
using t = transpose<mm, 1, 0>;
using shaped = squeeze<unsqueeze<expand_dims<reshape<t, 4>, 0>, 0>, 0, 1>;     // [4]
using cut = slice<pad<shaped, dims<1>, dims<1>>, 0, 1, 5>;                       // [4]
using parts = split<cut, 0, 2, 2>;
using joined = concatenate<0, get<parts, 0>, get<parts, 1>>;
using ids = input<"ids", i64, 3>;
using looked_up = add<gather<weight<"table", f32, 7, 4>, ids>, embedding<weight<"emb", f32, 7, 4>, ids>>;  // [3, 4]
using reduced = add<reduce_mean<looked_up, axes<0>>, add<reduce_sum<looked_up, axes<0>>, reduce_max<looked_up, axes<0>>>>;
using wave = conv1d<input<"pcm", f32, 1, 1, 16>, weight<"a", f32, 2, 1, 3>, {.padding = 1}>;
using mask = logical_or<logical_and<less<joined, scalar<0.f>>, greater<joined, scalar<1.f>>>,
                        logical_xor<logical_not<equal<joined, joined>>, less_equal<joined, scalar<0.5f>>>>;
using masked = where<tril<unsqueeze<greater_equal<cast<mask, f32>, joined>, 0>>, joined, scalar<0.f>>;  // [1, 4]
using ranked = get<topk<cumsum<masked, 1>, 2>, 0>;                                 // [1, 2]
using picked = gather_elements<masked, unsqueeze<argmax<joined>, 0>, 1>;         // [1, 1]
using both = tuple<joined, reduced>;
using net = model<output<"joined", get<both, 0>>, get<both, 1>, up, s2d, wave, masked, ranked, picked, argmin<joined, 0>>;

// The passes and the backends, unqualified too.
using parts_of_net = partition<net, cpu>;
using checked = compiled<net, reference>;
static_assert(checked::num_outputs == 9 && checked::output(0).name == "joined");
static_assert(exp_<fc>::desc.op == op_id::exp && tanh_<fc>::desc.op == op_id::tanh && abs_<fc>::desc.op == op_id::abs);

TEST_CASE("the ops with a trailing underscore print under their plain names") {
  const std::string text = print(module_of<model<exp_<fc>, tanh_<fc>, sqrt_<fc>, log_<fc>, erf_<fc>, abs_<fc>>>{});
  for (const char* name : {"exp(", "tanh(", "sqrt(", "log(", "erf(", "abs("}) {
    CHECK_MESSAGE(text.find(name) != std::string::npos, name);
  }
  CHECK(text.find("_(") == std::string::npos);
}
