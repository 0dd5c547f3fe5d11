#pragma once
/// The coefficients of the AVX-512 GELU's 32 polynomials for the normal tail (generated).
// Written by tools/gelu_table.py, which says how they are derived; do not edit by hand.
// gelu_tail_table[n][i]: the coefficient of h^n on interval i, where y = (i + h) / 8 and
// |h| <= 1/2; the polynomial approximates erfc(y / sqrt 2) / 2 (degree 6).

namespace partita::detail::simd::math_detail {

alignas(64) inline constexpr float gelu_tail_table[7][32] = {
    {
      0x1p-1f, 0x1.cd116cp-2f, 0x1.9aecbap-2f, 0x1.6a527ap-2f,
      0x1.3bf144p-2f, 0x1.105e82p-2f, 0x1.d022p-3f, 0x1.86bb5p-3f,
      0x1.44ed0cp-3f, 0x1.0ad7dap-3f, 0x1.b0bdd2p-4f, 0x1.5a6196p-4f,
      0x1.11a46ep-4f, 0x1.aaa65cp-5f, 0x1.482a24p-5f, 0x1.f20394p-6f,
      0x1.74bcf8p-6f, 0x1.13243cp-6f, 0x1.90925p-7f, 0x1.1f85a2p-7f,
      0x1.96f4e6p-8f, 0x1.1bee6cp-8f, 0x1.869044p-9f, 0x1.08c89p-9f,
      0x1.61de2p-10f, 0x1.d21af4p-11f, 0x1.2e86fep-11f, 0x1.8301bep-12f,
      0x1.e7dbcap-13f, 0x1.2eff8p-13f, 0x1.72d956p-14f, 0x1.bf3766p-15f},
    {
      -0x1.988454p-5f, -0x1.95567ap-5f, -0x1.8bf2bap-5f, -0x1.7cc794p-5f,
      -0x1.6883dp-5f, -0x1.50096ep-5f, -0x1.345d5ep-5f, -0x1.169596p-5f,
      -0x1.ef8e58p-6f, -0x1.b1ec62p-6f, -0x1.7610bap-6f, -0x1.3d7712p-6f,
      -0x1.094086p-6f, -0x1.b46178p-7f, -0x1.616454p-7f, -0x1.19bfa4p-7f,
      -0x1.ba4b44p-8f, -0x1.55c74p-8f, -0x1.0402ep-8f, -0x1.857a94p-9f,
      -0x1.1f2f06p-9f, -0x1.a0f22cp-10f, -0x1.29fa54p-10f, -0x1.a34ea6p-11f,
      -0x1.227214p-11f, -0x1.8c2226p-12f, -0x1.09f38ep-12f, -0x1.5f90f6p-13f,
      -0x1.c9897ep-14f, -0x1.251bf8p-14f, -0x1.71b92ep-15f, -0x1.cb2208p-16f},
    {
      0x0p+0f, 0x1.95567ap-12f, 0x1.8bf2bap-11f, 0x1.1d95bp-10f,
      0x1.6883dp-10f, 0x1.a40bcap-10f, 0x1.ce8c0ep-10f, 0x1.e785c6p-10f,
      0x1.ef8e58p-10f, 0x1.e829eep-10f, 0x1.d394e8p-10f, 0x1.b483b8p-10f,
      0x1.8de0c8p-10f, 0x1.628f32p-10f, 0x1.3537c8p-10f, 0x1.0823aap-10f,
      0x1.ba4b44p-11f, 0x1.6b23b4p-11f, 0x1.24833cp-11f, 0x1.ce819p-12f,
      0x1.66fac6p-12f, 0x1.119eecp-12f, 0x1.99b834p-13f, 0x1.2d6086p-13f,
      0x1.b3ab1ep-14f, 0x1.357aaep-14f, 0x1.b02bc6p-15f, 0x1.28a25p-15f,
      0x1.90584ep-16f, 0x1.09a158p-16f, 0x1.5a9d9cp-17f, 0x1.bcc8f6p-18f},
    {
      0x1.105838p-13f, 0x1.0a00cp-13f, 0x1.eeef68p-14f, 0x1.b44f5ap-14f,
      0x1.6883dp-14f, 0x1.1107aap-14f, 0x1.67c244p-15f, 0x1.5c3afcp-16f,
      -0x0p+0f, -0x1.335cc6p-16f, -0x1.188c8ap-15f, -0x1.78fd66p-15f,
      -0x1.ba1634p-15f, -0x1.dd4a9cp-15f, -0x1.e5e9f2p-15f, -0x1.d8841p-15f,
      -0x1.ba4b44p-15f, -0x1.90857ep-15f, -0x1.60193ap-15f, -0x1.2d3ccep-15f,
      -0x1.f6924ap-16f, -0x1.99586cp-16f, -0x1.45e9ccp-16f, -0x1.fbc13cp-17f,
      -0x1.8342c6p-17f, -0x1.215cf2p-17f, -0x1.a7dc2ap-18f, -0x1.306a86p-18f,
      -0x1.acf0e6p-19f, -0x1.288b4cp-19f, -0x1.927594p-20f, -0x1.0c206p-20f},
    {
      -0x0p+0f, -0x1.933a06p-20f, -0x1.83b3p-19f, -0x1.1032acp-18f,
      -0x1.4a78d4p-18f, -0x1.6d5a4p-18f, -0x1.77d1ccp-18f, -0x1.6b1a4ep-18f,
      -0x1.4a5ee6p-18f, -0x1.1a383ep-18f, -0x1.c0195ep-19f, -0x1.42d6cp-19f,
      -0x1.8de0c8p-20f, -0x1.53c93ap-21f, 0x1.9c4a62p-24f, 0x1.6b3108p-21f,
      0x1.26dcd8p-20f, 0x1.6eec12p-20f, 0x1.923472p-20f, 0x1.971a0ap-20f,
      0x1.84e502p-20f, 0x1.62da1cp-20f, 0x1.378ebep-20f, 0x1.087d62p-20f,
      0x1.b3ab1ep-21f, 0x1.5cf856p-21f, 0x1.105b96p-21f, 0x1.9ed2fcp-22f,
      0x1.349966p-22f, 0x1.c0f15cp-23f, 0x1.3f894cp-23f, 0x1.bd5d3ap-24f},
    {
      -0x1.46d042p-22f, -0x1.3a29c6p-22f, -0x1.15937ep-22f, -0x1.b9e9ap-23f,
      -0x1.2c6dd8p-23f, -0x1.21eb56p-24f, 0x1.345d5ep-28f, 0x1.2b67d6p-24f,
      0x1.084becp-23f, 0x1.5a34dap-23f, 0x1.886102p-23f, 0x1.93c15ap-23f,
      0x1.809d8ep-23f, 0x1.55971p-23f, 0x1.1a878ap-23f, 0x1.aed27cp-24f,
      0x1.26dcd8p-24f, 0x1.517bdcp-25f, 0x1.e4455ap-27f, -0x1.942f8ap-28f,
      -0x1.5d6824p-26f, -0x1.fbf308p-26f, -0x1.2654aap-25f, -0x1.2fac6ep-25f,
      -0x1.227214p-25f, -0x1.06984p-25f, -0x1.c5d06ep-26f, -0x1.795ceap-26f,
      -0x1.2f5b4ap-26f, -0x1.d90a64p-27f, -0x1.669112p-27f, -0x1.08b824p-27f},
    {
      0x0p+0f, 0x1.0b6a2cp-28f, 0x1.fa123cp-28f, 0x1.599562p-27f,
      0x1.92933p-27f, 0x1.a3e8c8p-27f, 0x1.8e770ep-27f, 0x1.57a572p-27f,
      0x1.084becp-27f, 0x1.5669f2p-28f, 0x1.2dfad6p-29f, -0x1.9bf5eap-32f,
      -0x1.58d3ep-29f, -0x1.177242p-28f, -0x1.575c58p-28f, -0x1.6e1d6ep-28f,
      -0x1.61d5dp-28f, -0x1.3b37a4p-28f, -0x1.03e8ep-28f, -0x1.8a3e8ap-29f,
      -0x1.0d3c16p-29f, -0x1.388fd8p-30f, -0x1.f43304p-32f, 0x1.1cbd1p-34f,
      0x1.d0b686p-32f, 0x1.5dacdep-31f, 0x1.923bf2p-31f, 0x1.96966ap-31f,
      0x1.7aa8dap-31f, 0x1.4c279p-31f, 0x1.15c9fap-31f, 0x1.be54a4p-32f},
};

}  // namespace partita::detail::simd::math_detail
