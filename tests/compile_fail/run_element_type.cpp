// expect: static assertion failed
// expect text: partita: run: the element type of this input's buffer does not match its declared dtype (f32: float, i32: std::int32_t, i64: std::int64_t, i8: std::int8_t, u8: std::uint8_t)
// expect text (GNU): partita::detail::element_matches<float, partita::dtype::i64>
// expect (GNU): collect_one\(.*\[with long unsigned int I = 0;
#include <cstdint>
#include <vector>
#include <partita/partita.hpp>
using namespace partita;
// Token ids declared i64, passed as floats.
using e = embedding<weight<"tok", f32, 10, 4>, input<"ids", i64, 3>>;
int main() {
  compiled<model<e>, reference> exe;
  std::vector<float> ids{1, 2, 3}, y(12);
  exe.run(ids, y);
}
