// The recurrent layers against PyTorch's numbers (golden values: a seeded nn.LSTM and nn.GRU of
// 3 inputs and 4 units over 5 steps, their weights in ONNX's gate order), on the reference and on
// cpu; the kernel a step runs, in the plan.
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <partita/partita.hpp>

using namespace partita;

namespace {
// torch.manual_seed(5); x = torch.randn(5, 1, 3); nn.LSTM(3, 4), then nn.GRU(3, 4).
const std::vector<float> x{
    -0.486780763f, -0.603821576f, -0.55809623f, 0.667524278f, -0.197415099f, 1.94278347f, -1.40170205f,
    -0.762557149f, 0.631213427f, -0.899135172f, -0.557793438f, 0.69071877f, 0.222458586f, -0.666225255f,
    0.684642196f};
const std::vector<float> lstm_w{
    -0.455833614f, -0.0115879774f, 0.296462893f, 0.243186533f, 0.469704211f, -0.439126372f, -0.0615209937f,
    0.486815035f, 0.0818747282f, -0.140998781f, -0.450304866f, 0.232672155f, 0.370871305f, -0.32399863f,
    0.381692767f, -0.250476956f, -0.0796044469f, 0.378386199f, 0.46098727f, 0.438926458f, 0.287563384f,
    0.464732587f, -0.180152714f, -0.03182441f, 0.37958622f, 0.400936961f, 0.4185794f, 0.0978885889f,
    0.356369019f, -0.125857353f, 0.406059504f, -0.042779088f, -0.103109121f, -0.248544157f, 0.266215503f,
    0.202302635f, 0.318040788f, -0.319534183f, -0.265849829f, 0.473162055f, -0.277520597f, -0.285158932f,
    -0.133780301f, -0.161604762f, -0.340035379f, 0.404067338f, 0.0557331443f, 0.22795701f};
const std::vector<float> lstm_r{
    -0.171015859f, -0.0367491841f, -0.0607969165f, 0.267137587f, 0.343671381f, -0.360056579f, -0.276099741f,
    -0.153777122f, 0.0668390989f, -0.194090962f, -0.310976386f, -0.0913220048f, -0.244002759f, 0.0137656927f,
    -0.370129645f, -0.124991417f, -0.348457038f, -0.110673368f, -0.384100556f, -0.336415052f, -0.0716053843f,
    0.0966616869f, -0.409687281f, 0.485952079f, 0.367738545f, -0.465319157f, 0.31253767f, -0.300035417f,
    -0.407442331f, 0.468426645f, -0.201060891f, -0.165860951f, -0.184486091f, -0.0690668821f, 0.392863095f,
    0.327861488f, -0.161352634f, -0.458411396f, -0.357643723f, -0.38359195f, -0.0474410057f, -0.222044051f,
    -0.349424362f, 0.110859632f, 0.0321757793f, -0.0749585032f, -0.181250691f, 0.426157892f, -0.48168385f,
    -0.0119122267f, 0.23210907f, 0.353025854f, -0.434989512f, -0.0782953501f, 0.416991889f, 0.0823068619f,
    0.151187897f, -0.22093153f, 0.347013116f, -0.187497377f, -0.269249082f, 0.453531563f, 0.132451892f,
    -0.00345164537f};
const std::vector<float> lstm_b{
    0.0623082519f, 0.282609224f, 0.0384626985f, -0.134368956f, -0.124066114f, -0.483805597f, -0.0393663645f,
    0.244250894f, 0.0423932076f, -0.259054184f, -0.363695979f, 0.130188763f, 0.0526864529f, 0.248443305f,
    -0.185746253f, -0.494192958f, 0.0462619662f, 0.286887407f, 0.0932604671f, 0.214406729f, 0.150827408f,
    -0.0697778463f, -0.457609236f, -0.499678671f, 0.45007056f, 0.0743971467f, 0.0832064152f, -0.202875972f,
    0.311782062f, 0.41943574f, -0.347279966f, 0.485306978f};
const std::vector<float> lstm_y{
    0.121462114f, 0.131190285f, -0.0195742715f, -0.0816508681f, 0.172242388f, 0.155764118f, -0.260218829f,
    0.141197577f, 0.0171676185f, 0.0249417592f, -0.0732123777f, -0.0472453311f, 0.0215161443f, 0.042844221f,
    -0.1028549f, -0.0850453898f, 0.150616586f, 0.140887499f, -0.162809983f, 0.0083673615f};
const std::vector<float> lstm_c{
    0.234032571f, 0.342705011f, -0.464276493f, 0.0168011636f};
const std::vector<float> gru_w{
    0.272919178f, -0.280448437f, -0.168396294f, 0.011451304f, 0.421963155f, 0.242661238f, -0.279806852f,
    -0.0586665273f, 0.0903744698f, 0.17365706f, -0.185793519f, -0.438781977f, -0.392769098f, -0.418242097f,
    -0.333430886f, -0.145606458f, -0.415035307f, -0.417993665f, -0.0556479692f, -0.420673251f, -0.0452045202f,
    0.085177958f, 0.0948879123f, 0.313777924f, -0.304980755f, 0.0171909332f, -0.341208518f, 0.139166713f,
    0.31429702f, -0.00546056032f, 0.262309909f, 0.350248992f, 0.31922406f, -0.476190329f, 0.453170776f,
    0.132209897f};
const std::vector<float> gru_r{
    0.339695513f, 0.487114012f, -0.323836744f, -0.209575653f, 0.103979588f, 0.281152189f, -0.41966778f,
    -0.186592519f, -0.397235632f, 0.459456384f, -0.170626581f, 0.300725639f, 0.272554636f, 0.0461493731f,
    0.0975247025f, 0.325261533f, -0.495674014f, 0.124419272f, -0.344301522f, 0.462810576f, 0.396464169f,
    -0.329790652f, -0.37059027f, 0.0351715684f, -0.132452548f, 0.21409142f, -0.465784669f, 0.370698154f,
    0.0448335409f, 0.00982046127f, -0.318927765f, 0.0310714841f, -0.063167274f, 0.263137579f, -0.0665338039f,
    0.00786697865f, 0.170915723f, -0.451109052f, -0.238063037f, -0.399072587f, -0.152047038f, -0.0314462781f,
    0.199586689f, -0.400161684f, -0.418452144f, 0.347047091f, -0.0595564246f, -0.25276947f};
const std::vector<float> gru_b{
    -0.328344464f, 0.396288395f, 0.145023942f, -0.497714698f, -0.115380228f, 0.0266667604f, -0.365649343f,
    -0.480870068f, -0.269348502f, 0.379231393f, 0.479564011f, 0.0994179249f, 0.084019959f, -0.443285406f,
    -0.491776109f, 0.420322001f, 0.278039157f, 0.0823620558f, 0.291024804f, -0.390945852f, 0.0483534932f,
    0.209313452f, -0.0669041872f, -0.413018167f};
const std::vector<float> gru_y{
    0.0487107113f, 0.156512022f, -0.0416773185f, -0.052059941f, -0.423573613f, 0.263688684f, 0.456963271f,
    -0.160747945f, -0.139926642f, 0.0658374354f, 0.315662503f, 0.221653625f, -0.18021597f, 0.0687691942f,
    0.272808403f, 0.233887076f, -0.361502379f, 0.138715491f, 0.367130935f, -0.0687795579f};

using seq = input<"x", f32, 5, 1, 3>;
using torch_lstm = lstm<seq, weight<"w", f32, 1, 16, 3>, weight<"r", f32, 1, 16, 4>, weight<"b", f32, 1, 32>>;
using torch_gru = gru<seq, weight<"w", f32, 1, 12, 3>, weight<"r", f32, 1, 12, 4>, weight<"b", f32, 1, 24>,
                      {.linear_before_reset = true}>;

weight_set weights(const std::vector<float>& w, const std::vector<float>& r, const std::vector<float>& b, int gates) {
  weight_set s;
  s.add("w", w, {1, gates * 4, 3}).add("r", r, {1, gates * 4, 4}).add("b", b, {1, 2 * gates * 4});
  return s;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
}
}  // namespace

TEST_CASE_TEMPLATE("lstm: every step's state and the last cell state as PyTorch computes them", B, reference, cpu) {
  using net = model<get<torch_lstm, 0>, get<torch_lstm, 1>, get<torch_lstm, 2>>;
  compiled<net, B> exe;
  exe.bind(weights(lstm_w, lstm_r, lstm_b, 4));
  std::vector<float> y(20), h(4), c(4);
  exe.run(x, y, h, c);
  check_close(y, lstm_y);
  check_close(h, std::vector<float>(lstm_y.end() - 4, lstm_y.end()));
  check_close(c, lstm_c);
}

TEST_CASE_TEMPLATE("gru with PyTorch's reset (linear_before_reset)", B, reference, cpu) {
  using net = model<get<torch_gru, 0>>;
  compiled<net, B> exe;
  exe.bind(weights(gru_w, gru_r, gru_b, 3));
  std::vector<float> y(20);
  exe.run(x, y);
  check_close(y, gru_y);
}

TEST_CASE("a state given: one run over the sequence equals two runs over its halves") {
  // Streaming: the state after the first steps, given back as the initial state, continues the
  // sequence exactly (the GRU of PyTorch above).
  using first = input<"x", f32, 2, 1, 3>;
  using rest = input<"x", f32, 3, 1, 3>;
  using h0 = input<"h0", f32, 1, 1, 4>;
  using w = weight<"w", f32, 1, 12, 3>;
  using r = weight<"r", f32, 1, 12, 4>;
  using b = weight<"b", f32, 1, 24>;
  using head = gru<first, w, r, b, {.linear_before_reset = true}>;
  using tail = gru<rest, w, r, b, {.linear_before_reset = true}, h0>;
  compiled<model<get<head, 0>, get<head, 1>>, cpu> a;
  compiled<model<get<tail, 0>>, cpu> z;
  a.bind(weights(gru_w, gru_r, gru_b, 3));
  z.bind(weights(gru_w, gru_r, gru_b, 3));
  std::vector<float> y1(8), h(4), y2(12);
  a.run(std::vector<float>(x.begin(), x.begin() + 6), y1, h);
  z.run(std::vector<float>(x.begin() + 6, x.end()), h, y2);
  y1.insert(y1.end(), y2.begin(), y2.end());
  check_close(y1, gru_y);
}

TEST_CASE("the plan names the kernel of each recurrent step") {
  using onnx_gru = gru<seq, weight<"w", f32, 1, 12, 3>, weight<"r", f32, 1, 12, 4>, weight<"b", f32, 1, 24>>;
  const std::string fused = print(compiled<model<get<torch_lstm, 0>>, cpu>::plan);
  CHECK(fused.find("lstm(in0, w0, w1, w2) -> out0") == std::string::npos);  // the tuple has its own buffer
  CHECK(fused.find("[recurrent_gemm: every step's input projection as one GEMM") != std::string::npos);
  // ONNX's own GRU (the reset before the recurrent product) runs on the reference kernel.
  CHECK(print(compiled<model<get<onnx_gru, 0>>, cpu>::plan).find("recurrent_gemm") == std::string::npos);
  CHECK(print(module_of<model<get<torch_lstm, 0>>>{}).find(
            "lstm(%x, @w, @r, @b, forward) : (f32[5, 1, 1, 4], f32[1, 1, 4], f32[1, 1, 4])") != std::string::npos);
}
