#include "tracer/builtins/builtins.h"

namespace ytape::tracer {

const Builtins& language_builtins() {
  // The order is the one the globals are filled in: a later family's name replaces an
  // earlier one's.
  static const Builtins builtins{
      .families = {add_core_builtins, add_math_builtins, add_division_builtins, add_array_builtins,
                   add_reduce_builtins, add_creation_builtins, add_random_builtins,
                   add_sort_builtins, add_collection_builtins, add_prim_builtins,
                   add_assign_builtins, add_vector_builtins, add_grad_builtins, add_jvp_builtins,
                   add_vmap_builtins, add_test_builtins, add_string_builtins, add_file_builtins},
      .write_array = write_array,
      .stop_gradient = stop_gradient,
  };
  return builtins;
}

}  // namespace ytape::tracer
