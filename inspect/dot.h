// Graphviz drawings of tapes (`ytape dot`).
#pragma once

#include <string>

#include "tape/tape.h"

namespace ytape {

/// The tape as a Graphviz digraph, deterministic for a given tape:
///
/// - every op is a node `op<N>` (N its 1-based position) labelled with its primitive and
///   output type(s), with the op's text form as tooltip; inputs are blue ellipses labelled
///   with their name and type, constants grey boxes (with their value when scalar),
///   effects (print, guard, random numbers) yellow hexagons;
/// - every output is a node `out<N>`, an orange house labelled with its name;
/// - an edge runs from the op defining each argument to the op reading it, labelled with the
///   output number when the defining op has several;
/// - ops other than inputs are grouped by source location: one `cluster_<K>` subgraph per
///   `file:line`, in order of first appearance, labelled with it, so that the ops of a model
///   line (a layer) and their gradient ops draw as one block.
std::string tape_dot(const Tape& t);

}  // namespace ytape
