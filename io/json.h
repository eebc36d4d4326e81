// The canonical JSON form of a tape (docs/tape-format.md): one object, keys in a fixed
// order, one op per line, vars numbered densely from 1.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "tape/tape.h"

namespace ytape {

/// The JSON format's name and the newest version this ytape reads. Version 2 added regions
/// (Op::regions), version 3 scopes (Tape::scopes); a tape is written as the oldest version
/// that holds it (without either, version 1, byte for byte as before), which an older ytape
/// refuses as newer than it reads.
inline constexpr std::string_view kTapeFormat = "ytape-tape";
inline constexpr int kTapeFormatVersion = 3;

/// The canonical JSON text of a valid tape (see docs/tape-format.md). Deterministic: the
/// same tape gives the same bytes. Vars are written 1-based (Var::id + 1), so a valid tape,
/// whose vars are defined in increasing id order, is numbered densely.
std::string write_tape_json(const Tape& t);
/// The same text in pieces of about a megabyte, each passed to `put` as it is made: a
/// 10^7-op tape's 0.9 GB of text is never held whole.
void write_tape_json(const Tape& t, const std::function<void(std::string_view)>& put);

/// Reads a tape from JSON text; `source` names the text in messages ("model.json",
/// "<stdin>"). Keys may come in any order and with any whitespace; var ids need only be
/// unique positive integers; omitted optional attributes take their defaults. The tape is
/// rebuilt through Builder, so every type is re-inferred and the result is valid.
/// Throws UserError "<source>:<line>: <message>" on anything malformed: bad JSON, unknown
/// or missing keys, an unknown primitive, a var used before its definition, a "type" that
/// disagrees with the inferred one, and so on (docs/tape-format.md lists them).
Tape read_tape_json(std::string_view text, std::string_view source);
/// As above, and now and then between the outermost tape's ops, `consumed(n)`: the first n
/// bytes of `text` are read and nothing of the reader points into them any more, so that
/// the caller may give their memory back (a 10^7-op tape's text is 0.9 GB).
Tape read_tape_json(std::string_view text, std::string_view source,
                    const std::function<void(size_t)>& consumed);

}  // namespace ytape
