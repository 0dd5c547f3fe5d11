// run_model: runs one imported model compiled for cpu on its inputs from a safetensors file and
// writes its outputs and plan; shared by the int8 model programs (deep_models.cpp,
// torch_qat_models.cpp).
#pragma once

#include <cstddef>
#include <cstring>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <partita/partita.hpp>

namespace int8_tests {

/// Where a program reads the weights (imports) and inputs (in) and writes its results (out).
struct paths {
  std::string imports, in, out;
};

/// Writes `text` to `path`, or throws.
inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw partita::error("cannot write " + path);
}

/// Runs `Net` on its inputs from paths.in/name.safetensors (each of the declared dtype and size)
/// and writes its outputs and plan under paths.out.
template <class Net>
void run_model(const std::string& name, const paths& where) {
  using namespace partita;
  using exe_t = compiled<Net, cpu>;
  const auto exe = std::make_unique<exe_t>();
  exe->bind(load_safetensors(where.imports + "/" + name + ".safetensors"));
  const safetensors_file given = load_safetensors(where.in + "/" + name + ".safetensors");

  // float-typed storage: run_unchecked wants buffers aligned as floats, whatever their dtype.
  std::vector<std::vector<float>> ins(exe_t::num_inputs), outs(exe_t::num_outputs);
  std::vector<const float*> in_ptrs;
  std::vector<float*> out_ptrs;
  for (std::size_t i = 0; i < exe_t::num_inputs; ++i) {
    const tensor_slot& slot = exe_t::input(i);
    const tensor_data* t = given.find(std::string(slot.name));
    if (!t || t->type != slot.type || t->bytes.size() != slot.bytes())
      throw error(name + ": input " + std::string(slot.name) + " is missing or not of the declared dtype and size");
    ins[i].resize((slot.bytes() + sizeof(float) - 1) / sizeof(float));
    std::memcpy(ins[i].data(), t->bytes.data(), slot.bytes());
    in_ptrs.push_back(ins[i].data());
  }
  for (std::size_t o = 0; o < exe_t::num_outputs; ++o) {
    outs[o].resize((exe_t::output(o).bytes() + sizeof(float) - 1) / sizeof(float));
    out_ptrs.push_back(outs[o].data());
  }
  exe->run_unchecked(in_ptrs.data(), out_ptrs.data());

  std::vector<tensor_data> written;
  for (std::size_t o = 0; o < exe_t::num_outputs; ++o) {
    const tensor_slot& slot = exe_t::output(o);
    tensor_data t{std::string(slot.name), std::string(safetensors_name(slot.type)), slot.type, {}, {}};
    for (int d = 0; d < slot.shp.rank; ++d) t.dims.push_back(slot.shp[d]);
    t.bytes = std::as_bytes(std::span(outs[o])).first(slot.bytes());
    written.push_back(std::move(t));
  }
  save_safetensors(where.out + "/" + name + ".safetensors", written);
  write_text(where.out + "/" + name + ".plan.txt", print(exe_t::plan));
}

}  // namespace int8_tests
