// Writes the sample tapes built in models.cc as canonical JSON.
// usage: make_tapes OUTDIR
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "io/json.h"
#include "samples/cpp/models.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: make_tapes OUTDIR\n");
    return 2;
  }
  std::string dir = argv[1];
  const std::pair<const char*, ytape::Tape> tapes[] = {
      {"mlp.json", ytape::samples::mlp(32)},
      {"resnet18.json", ytape::samples::resnet18(1)},
  };
  for (const auto& [name, tape] : tapes) {
    std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
      fmt::print(stderr, "cannot write {}\n", path);
      return 2;
    }
    std::string json = ytape::write_tape_json(tape);
    std::fwrite(json.data(), 1, json.size(), f);
    std::fclose(f);
  }
  return 0;
}
