// wakebench noise A.json B.json [C.json...] --out NOISE.json: see analysis/noise.h.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "analysis/noise.h"
#include "common/result_set.h"
#include "runners/commands.h"

namespace wb {
namespace {

void add_noise_command(CLI::App& app) {
  struct Args {
    std::vector<std::string> files;
    std::string out;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "noise",
      "Measure this machine's A/A noise from two or more runs of the same suite (same binary, same "
      "machine): per case and metric, the largest change between any two; compare --noise FILE "
      "never stars a smaller change");
  cmd->add_option("files", args->files, "A.json B.json [C.json...]")->required()->expected(2, -1);
  cmd->add_option("--out", args->out, "the noise file to write")->required();
  cmd->callback([args] {
    std::vector<ResultSet> sets;
    for (const std::string& f : args->files) sets.push_back(load_result_set(f));
    const NoiseFloor n = measure_noise(sets);
    write_json_atomic(args->out, nlohmann::ordered_json(noise_json(n)));
    std::fprintf(stderr, "wakebench: A/A noise of %zu cases from %zu sets\n", n.floor_pct.size(),
                 sets.size());
    std::printf("%s\n", args->out.c_str());
  });
}

static CommandRegistrar reg("noise", add_noise_command);

}  // namespace
}  // namespace wb
