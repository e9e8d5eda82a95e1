/* The fake LiteRT plugin of tests/plugins with one fault, for
 * tests/check: its partition crashes on a SoC model it does not list, as
 * LiteRT's own host would pass it from a mistyped --soc_model. LiteRT's ABI
 * defines that call, so `graft check` must fail misuse.plugin. */
#define LiteRtCompilerPluginPartition FakeLiteRtCompilerPluginPartition
#include "tests/plugins/litert_fake_plugin.c"
#undef LiteRtCompilerPluginPartition

FAKE_EXPORT LiteRtStatus LiteRtCompilerPluginPartition(
    LiteRtCompilerPlugin plugin, const char* soc_model, LiteRtSubgraph subgraph,
    LiteRtOpList selected_ops) {
  size_t i;
  int known = soc_model == NULL;
  for (i = 0; i < sizeof(kSocs) / sizeof(kSocs[0]); ++i) {
    if (soc_model != NULL && strcmp(soc_model, kSocs[i]) == 0) known = 1;
  }
  if (!known) abort();
  return FakeLiteRtCompilerPluginPartition(plugin, soc_model, subgraph,
                                           selected_ops);
}
