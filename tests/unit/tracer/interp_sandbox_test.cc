// Hostile programs (issue #42): a loop that never ends is stopped by the step limit, which
// is on by default; include() reads only regular program files of a bounded size, never
// blocking, nested at most 100 deep; include(), isfile(), isdir(), ispath() and cd() stay
// in the program's folder tree and the folders allowed beside it; joinpath answers, and
// writing a file (mkpath) is refused.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/unit/tracer/interp_helpers.h"
#include "tracer/lang/source.h"
#include "tracer/program.h"

namespace ytape::tracer::testing {

namespace {

namespace fs = std::filesystem;

// A fresh folder under the system's temporary folder, removed at the end of the test.
struct TempFolder {
  fs::path path;
  explicit TempFolder(const std::string& name)
      : path(fs::temp_directory_path() / ("ytape_" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempFolder() { fs::remove_all(path); }
  std::string file(const std::string& name, const std::string& text) const {
    fs::create_directories((path / name).parent_path());
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

std::string run_with_limit(const std::string& program, int64_t steps) {
  Limits limits;
  limits.max_steps = steps;
  Program in(limits);
  try {
    in.run_text("t.jl", program);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

// The message of running file `path` as the entry program, or "no error".
std::string run_file_error(const std::string& path, const std::vector<std::string>& allow = {}) {
  Program in;
  try {
    for (const std::string& dir : allow) in.sandbox().allow(dir);
    in.run_file(path);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("the step limit is on by default, and the prelude's loading does not count") {
  CHECK(Limits{}.max_steps == kDefaultMaxSteps);
  // At the interpreter's 25 million steps a second or more, `while true end` ends within
  // seconds: well within a minute on a machine ten times slower.
  CHECK(kDefaultMaxSteps > 0);
  CHECK(kDefaultMaxSteps <= 100'000'000);
  Program in;
  CHECK(in.limits().max_steps == kDefaultMaxSteps);
  CHECK(in.steps() == 0);
  in.run_text("t.jl", "x = 1 + 2");
  CHECK(in.steps() > 0);
  CHECK(in.steps() < 10);
}

TEST_CASE("a loop that never ends stops at the step limit, naming the loop") {
  std::string m = run_with_limit("x = 1\nwhile true end\n", 1000);
  CHECK(has(m,
            "t.jl:2:7: the program ran more than 1000 steps (in the loop at line 2); raise "
            "the limit with --max-steps"));
  // Of the loops running, the one that ran the most: the endless inner loop, not the
  // outer one; the endless outer loop, not a short one inside the function it calls.
  m = run_with_limit("for i in 1:3\n  while i > 0\n  end\nend\n", 1000);
  CHECK(has(m, "(in the loop at line 2)"));
  m = run_with_limit("function h()\n  for k in 1:3 end\nend\nwhile true\n  h()\nend\n", 5000);
  CHECK(has(m, "(in the loop at line 4)"));
}

TEST_CASE("a loop named from another file is named with its file") {
  TempFolder dir("loop_file");
  dir.file("lib.jl", "function work()\n  s = 0\n  for i in 1:3\n    s += i\n  end\n  s\nend\n");
  std::string p = dir.file("p.jl", "include(\"lib.jl\")\nwhile true\n  work()\nend\n");
  Limits limits;
  limits.max_steps = 5000;
  Program in(limits);
  std::string m = "no error";
  try {
    in.run_file(p);
  } catch (const UserError& e) {
    m = e.what();
  }
  // The error is at an expression of work(), in lib.jl; the endless loop is p.jl's.
  CHECK_MESSAGE(has(m, "lib.jl:"), m);
  CHECK_MESSAGE(has(m, "(in the loop at " + p + ":2)"), m);
}

TEST_CASE("the step limit covers the traced function, and 0 is no limit") {
  Limits limits;
  limits.max_steps = 2000;
  Program in(limits);
  in.run_text("t.jl", "function f(x)\n  n = 0\n  while n >= 0\n    n += 1\n  end\n  x\nend");
  std::string m = "no error";
  try {
    trace(in, "f", {"f32[2]"});
  } catch (const UserError& e) {
    m = e.what();
  }
  CHECK(has(m, "the program ran more than 2000 steps (in the loop at line 3)"));
  CHECK(has(m, "in f"));
  CHECK(run_with_limit("s = 0\nfor i in 1:10000\n  global s += i\nend", 0) == "no error");
}

TEST_CASE("a program file is a regular file of at most 64 MiB, read without blocking") {
  TempFolder dir("source_files");
  std::string text;
  CHECK(read_source_file(dir.file("a.jl", "x = 1\n"), text) == "");
  CHECK(text == "x = 1\n");
  CHECK(read_source_file(dir.path.string(), text) == "it is a folder, not a program file");
  CHECK(read_source_file("/dev/zero", text) == "it is a character device, not a program file");
  std::string fifo = (dir.path / "fifo.jl").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(read_source_file(fifo, text) == "it is a FIFO, not a program file");
  std::string big = dir.file("big.jl", "");
  fs::resize_file(big, kMaxSourceBytes + 1);  // sparse: nothing is written
  CHECK(read_source_file(big, text) ==
        "it is 67108865 bytes, more than the 64 MiB a program file may be");
  CHECK(read_source_file((dir.path / "none.jl").string(), text) == "No such file or directory");
  CHECK(run_file_error("/dev/zero") ==
        "cannot read '/dev/zero': it is a character device, not a program file");
  CHECK(run_file_error(fifo) == "cannot read '" + fifo + "': it is a FIFO, not a program file");
}

TEST_CASE("include reads only program files in the program's folder tree") {
  TempFolder dir("sandbox");
  std::string outside = dir.file("outside/x.jl", "y = 2\n");
  dir.file("outside/secret.jl", "root:x:0:0:root:/root:/bin/bash\n");
  dir.file("proj/lib/a.jl", "z = 3\n");
  dir.file("proj/notes.txt", "root:x:0:0\n");
  fs::create_directory_symlink(dir.path / "outside", dir.path / "proj" / "link");
  fs::create_directories(dir.path / "proj" / "folder.jl");
  auto program = [&](const std::string& text) { return dir.file("proj/p.jl", text); };

  CHECK(run_file_error(program("include(\"lib/a.jl\")\ninclude(\"lib/../lib/a.jl\")")) ==
        "no error");
  for (const std::string& path :
       std::vector<std::string>{"../outside/secret.jl", "link/secret.jl", outside}) {
    std::string m = run_file_error(program("include(\"" + path + "\")"));
    CHECK(has(m, "p.jl:1:1: include(\"" + path + "\")"));
    CHECK(has(m, "is outside the program's folder "));
    CHECK(has(m, "; allow it with --allow-read " + (dir.path / "outside").string()));
    CHECK(!has(m, "root:"));
  }
  // Allowed: the folder given, and only it.
  std::string p = program("include(\"../outside/secret.jl\")");
  std::string allowed = run_file_error(p, {(dir.path / "outside").string()});
  CHECK_MESSAGE(has(allowed, "secret.jl:1:"), allowed);
  CHECK(has(run_file_error(p, {(dir.path / "proj").string()}),
            "is outside the program's folder " + (dir.path / "proj").string() +
                " and the folders allowed with --allow-read;"));
  CHECK(has(run_file_error(p, {"/no/such/folder"}),
            "--allow-read /no/such/folder: No such file or directory"));
  // Inside the tree, only *.jl, and no folder or device.
  std::string m = run_file_error(program("include(\"notes.txt\")"));
  CHECK(has(m, "include(\"notes.txt\"): only program files, named *.jl, are included"));
  CHECK(!has(m, "root:"));
  CHECK(has(run_file_error(program("include(\"folder.jl\")")),
            "folder.jl': it is a folder, not a program file"));
  // The system would open the path up to its NUL, not the path checked.
  CHECK(has(run_file_error(program("include(\"lib/a.jl\\0/../a.jl\")")),
            "a path holds no NUL character"));
}

TEST_CASE("isfile, isdir, ispath and cd answer inside the program's folder and fail outside") {
  TempFolder dir("sandbox_paths");
  dir.file("proj/data/x.bin", "");
  std::string p = dir.file("proj/p.jl", "");
  std::string d = (dir.path / "proj").string();
  Program in;
  in.run_file(p);
  CHECK(show(in.eval_text("isfile(\"" + d + "/data/x.bin\"), isdir(\"" + d + "/data\"), ispath(\"" +
                          d + "/none\")")) == "(true, true, false)");
  for (const std::string& call :
       std::vector<std::string>{"isfile(\"/etc/passwd\")", "ispath(\"" + d + "/../x\")",
                                "isdir(\"/proc/self\")", "cd(\"/\")"}) {
    std::string m = "no error";
    try {
      in.eval_text(call);
    } catch (const UserError& e) {
      m = e.what();
    }
    CHECK_MESSAGE(has(m, "<eval>:1:1: " + call), m);
    CHECK_MESSAGE(has(m, "is outside the program's folder " + d + "; allow it"), m);
  }
  // The message suggests the folder itself for isdir, the folder holding a file otherwise.
  try {
    in.eval_text("isdir(\"/proc/self\")");
  } catch (const UserError& e) {
    CHECK(has(e.what(), "allow it with --allow-read /proc/"));
  }
  in.sandbox().allow("/etc");
  CHECK(show(in.eval_text("isdir(\"/etc\")")) == "true");
}

TEST_CASE("ENV is empty: a program sees none of the shell's variables") {
  ::setenv("YTAPE_TEST_SECRET", "hunter2", 1);
  CHECK(eval_show("", "length(ENV), haskey(ENV, \"YTAPE_TEST_SECRET\")") == "(0, false)");
  ::unsetenv("YTAPE_TEST_SECRET");
}

TEST_CASE("a chain of includes deeper than the limit is an error, not a stack overflow") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "ytape_include_chain";
  std::filesystem::create_directories(dir);
  for (int i = 1; i <= 300; ++i) {
    std::ofstream(dir / fmt::format("c{}.jl", i)) << fmt::format("include(\"c{}.jl\")\n", i + 1);
  }
  std::ofstream(dir / "c301.jl") << "x = 1\n";
  Program in;
  std::string message = "no error";
  try {
    in.run_file((dir / "c1.jl").string());
  } catch (const UserError& e) {
    message = e.what();
  }
  std::filesystem::remove_all(dir);
  CHECK(message.find("c100.jl:1:1: includes nested deeper than 100 files") != std::string::npos);
}

TEST_CASE("paths: ispath, isdir, isfile and joinpath answer; mkpath is refused") {
  // Tests run in the build folder's tests/; the folder "." always exists.
  CHECK(eval_show("", "ispath(\".\"), isdir(\".\"), isfile(\".\"), ispath(\"no/such/path\")") ==
        "(true, true, false, false)");
  CHECK(
      eval_show("", "joinpath(\"runs/\", \"model.bson\"), joinpath(\"output\", \"epoch_1.png\")") ==
      "(\"runs/model.bson\", \"output/epoch_1.png\")");
  CHECK(eval_show("", "joinpath(\"a\", \"b\", \"c.jl\"), joinpath(\"a\", \"/b\")") ==
        "(\"a/b/c.jl\", \"/b\")");
  CHECK(run_error("mkpath(\"runs\")").find("mkpath('runs'): the tracer writes no files") !=
        std::string::npos);
  CHECK(run_error("ispath(1)").find("ispath takes a path, a String, got an Int64") !=
        std::string::npos);
}

}  // namespace ytape::tracer::testing
