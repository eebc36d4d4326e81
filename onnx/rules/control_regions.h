// If, Loop and Scan imported as region ops (onnx/rules/control_regions.cc), for the rules of
// onnx/rules/control.cc.
#pragma once

#include "onnx/importer.h"

namespace ytape::onnx_import {

/// An If as a cond of its two branches, on its condition as it is at run time.
void if_region(Importer& im, const Node& n);
/// A Loop without scan outputs as a while_loop: its carries the iteration number, whether
/// the body's condition held, then the Loop's; running while that holds and the number is
/// below the trip count (max_trips, where it is known at import; else unbounded). False,
/// with nothing recorded, where the Loop does not fit (scan outputs, sequences).
bool loop_region(Importer& im, const Node& n);
/// A Loop with scan outputs, a trip count known at import (at most 2^30) and a condition
/// that stays true (a true constant, or the body passing its condition on) as a scan of
/// that length: the condition a const, the carried values its carries, the iteration
/// number an xs of 0..M-1, the scan outputs its ys. A for loop exported from PyTorch has
/// this form. False, with nothing recorded, where the Loop does not fit.
bool loop_scan(Importer& im, const Node& n);
/// A Scan (opset 9 on) of `states` states and `outputs` scan outputs as a scan op: the
/// states its carries, each scan input an xs, the scan outputs its ys, each scan axis moved
/// to ytape's last dim (ONNX's first) and back, and each input and output of the other
/// direction than the first reversed along its steps. False, with nothing recorded, where
/// it does not fit (scan inputs of no steps or of different lengths; unrolled then).
bool scan_region(Importer& im, const Node& n, int states, int outputs);
/// A Scan-8 (`states` states, `outputs` scan outputs, no sequence_lens shorter than its
/// inputs) as a scan over the batch, ONNX's first axis, whose body is a scan over each
/// element's sequence: the batch elements' final states and stacked outputs stacked again
/// along the batch. False, with nothing recorded, where it does not fit.
bool scan8_region(Importer& im, const Node& n, int states, int outputs);

}  // namespace ytape::onnx_import
