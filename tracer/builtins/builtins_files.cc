// Paths and the file system, as scripts ask about them: where they run from (abspath,
// cd), whether a results folder exists (ispath), and the names of files they would write
// (joinpath). The tracer reads no files but include()'s and writes none, so a trace never
// depends on the files it is asked about beyond these answers, and writing one is refused.
// What they ask about is confined as include() is (Interpreter::sandbox()): a path outside
// the program's folder is an error, not an answer, so that no program probes the machine.
#include <fmt/format.h>

#include <filesystem>
#include <string>

#include "tape/error.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// The one String argument of f(path), or a UserError naming f.
const std::string& path_arg(const Args& args, std::string_view f) {
  need_args(args, 1, 1, f);
  if (args.pos[0].kind != VKind::string)
    user_error("{} takes a path, a String, got {}", f, a_type_name(args.pos[0]));
  return args.pos[0].text();
}

// abspath(path): the path made absolute from the working directory, `.` and `..`
// resolved, as Julia's (`abspath(PROGRAM_FILE) == @__FILE__` tells a script run from one
// included).
Value abspath(Interpreter&, Args& args) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path_arg(args, "abspath"), ec);
  return Value::string(p.lexically_normal().string());
}

// Fails unless the sandbox allows `f(path)` to look at `path`.
void confine(Interpreter& in, std::string_view f, const std::string& path, bool folder) {
  in.sandbox().check(path, fmt::format("{}({})", f, show(Value::string(path))), folder);
}

// cd(dir): checks that the folder exists, and changes nothing: the tracer reads no files
// but include()'s, which are found from the including file, and ytape's own files stay
// relative to where it was started.
Value cd(Interpreter& in, Args& args) {
  const std::string& dir = path_arg(args, "cd");
  confine(in, "cd", dir, true);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) user_error("cd: '{}' is not a folder", dir);
  return Value();
}

// ispath(p), isdir(p), isfile(p): whether something, a folder or a plain file is there.
template <int Kind>
Value exists(Interpreter& in, Args& args) {
  static constexpr const char* kNames[] = {"ispath", "isdir", "isfile"};
  const std::string& p = path_arg(args, kNames[Kind]);
  confine(in, kNames[Kind], p, Kind != 2);
  std::error_code ec;
  std::filesystem::file_status s = std::filesystem::status(p, ec);
  bool yes = Kind == 0   ? std::filesystem::exists(s)
             : Kind == 1 ? std::filesystem::is_directory(s)
                         : std::filesystem::is_regular_file(s);
  return Value::boolean(yes);
}

// joinpath(parts...): the parts joined by "/", an absolute part starting afresh, as
// Julia's on Unix (joinpath("runs/", "model.bson") == "runs/model.bson").
Value joinpath(Interpreter&, Args& args) {
  if (args.pos.empty()) user_error("joinpath takes one or more paths");
  std::filesystem::path p;
  for (const Value& v : args.pos) {
    if (v.kind != VKind::string)
      user_error("joinpath takes paths, Strings, got {}", a_type_name(v));
    p /= v.text();
  }
  return Value::string(p.string());
}

// mkpath(dir) would make folders: refused by name, as a trace writes no files.
Value mkpath(Interpreter&, Args& args) {
  user_error(
      "mkpath('{}'): the tracer writes no files or folders; give the script a folder "
      "that exists, or leave the call out of what is traced",
      path_arg(args, "mkpath"));
}

}  // namespace

void add_file_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"abspath", abspath},
                        {"cd", cd},
                        {"ispath", exists<0>},
                        {"isdir", exists<1>},
                        {"isfile", exists<2>},
                        {"joinpath", joinpath},
                        {"mkpath", mkpath},
                    });
}

}  // namespace ytape::tracer
