# Command-line cases beyond the malformed-tape set. ${YTAPE} is the binary; paths are
# relative to tests/cli.

cli_test(version EXIT 0 STDOUT ${CASES}/expected/version.txt COMMAND ${YTAPE} --version)
cli_test(help EXIT 0 COMMAND ${YTAPE} --help)
# Command-line mistakes name the word at fault and, for a likely typo, the closest valid one.
cli_test(no_subcommand EXIT 2 STDERR ${CASES}/expected/no_subcommand.err COMMAND ${YTAPE})
cli_test(unknown_command EXIT 2 STDOUT ${CASES}/empty.txt STDERR ${CASES}/expected/unknown_command.err
         COMMAND ${YTAPE} runn run/add.json)
cli_test(unknown_option EXIT 2 STDERR ${CASES}/expected/unknown_option.err
         COMMAND ${YTAPE} show --frobnicate x.json)
cli_test(mistyped_option EXIT 2 STDERR ${CASES}/expected/mistyped_option.err
         COMMAND ${YTAPE} run run/add.json --repat 3)
cli_test(missing_file EXIT 2 STDERR ${CASES}/expected/missing_file.err
         COMMAND ${YTAPE} check no/such/tape.json)

set(MLP ../../samples/tapes/mlp.json)
cli_test(show_text EXIT 0 STDOUT ${CASES}/expected/mlp.txt COMMAND ${YTAPE} show ${MLP})
cli_test(show_stdin EXIT 0 STDOUT ${CASES}/expected/mlp.txt STDIN ${CASES}/${MLP} COMMAND ${YTAPE} show -)
# Reading and writing back a canonical file is byte-identical.
cli_test(show_json_round_trip EXIT 0 STDOUT ${CASES}/${MLP} COMMAND ${YTAPE} show --json ${MLP})
cli_test(show_json_round_trip_resnet EXIT 0 STDOUT ${CASES}/../../samples/tapes/resnet18.json
         COMMAND ${YTAPE} show --json ../../samples/tapes/resnet18.json)
cli_test(check_summary EXIT 0 STDOUT ${CASES}/expected/mlp_check.txt COMMAND ${YTAPE} check ${MLP})
cli_test(output_is_atomic EXIT 0 COMMAND bash ${CASES}/atomic.sh ${YTAPE} ${MLP})
cli_test(output_targets EXIT 0 COMMAND bash ${CASES}/output_targets.sh ${YTAPE} ${MLP})
cli_test(faults EXIT 0 COMMAND bash ${CASES}/faults.sh ${YTAPE} ${MLP} ../../samples/tapes/resnet18.json
         ${YTAPE_SANITIZE})
cli_test(sample_tapes_up_to_date EXIT 0
         COMMAND bash ${CASES}/samples_golden.sh $<TARGET_FILE:make_tapes> ${CASES}/../../samples/tapes)

# ytape run: outputs from JSON and safetensors inputs, made-up inputs, and bad inputs.
cli_test(run_json EXIT 0 STDOUT ${CASES}/expected/run_json.out
         COMMAND ${YTAPE} run run/add.json --inputs run/inputs.json)
cli_test(run_safetensors EXIT 0 STDOUT ${CASES}/expected/run_json.out
         COMMAND ${YTAPE} run run/add.json --inputs run/inputs.safetensors)
cli_test(run_random EXIT 0 STDOUT ${CASES}/expected/run_random.out
         COMMAND ${YTAPE} run run/add.json --random --seed 3)
# --skip-extra leaves out the file's 'w', which the tape has no input for.
cli_test(run_skip_extra EXIT 0 STDOUT ${CASES}/expected/run_json.out
         COMMAND ${YTAPE} run run/add.json --inputs run/extra.json --skip-extra)
foreach(case missing_input:missing.json wrong_shape:wrong_shape.json extra_input:extra.json
             wrong_dtype:wrong_dtype.safetensors truncated_file:truncated.safetensors)
  string(REPLACE ":" ";" parts ${case})
  list(GET parts 0 name)
  list(GET parts 1 file)
  cli_test(run_${name} EXIT 2 STDOUT ${CASES}/empty.txt STDERR ${CASES}/expected/run_${name}.err
           COMMAND ${YTAPE} run run/add.json --inputs run/${file})
endforeach()
# An f16 tape: its values printed as f16, each op rounded (0.1 + 2048 is 2048); a tensor
# file whose F16 tensor has the wrong byte count is refused.
cli_test(run_f16 EXIT 0 STDOUT ${CASES}/expected/run_f16.out
         COMMAND ${YTAPE} run run/add_f16.json --inputs run/inputs_f16.json)
cli_test(run_wrong_size_f16 EXIT 2 STDOUT ${CASES}/empty.txt
         STDERR ${CASES}/expected/run_wrong_size_f16.err
         COMMAND ${YTAPE} run run/add_f16.json --inputs run/wrong_size_f16.safetensors)
cli_test(run_reference_kernels EXIT 0 STDOUT ${CASES}/expected/run_random.out
         COMMAND ${YTAPE} run run/add.json --random --seed 3 --kernels reference)
cli_test(run_plain_layouts EXIT 0 STDOUT ${CASES}/expected/run_random.out
         COMMAND ${YTAPE} run run/add.json --random --seed 3 --layouts plain)
# ytape plan: the executor's plan; the MLP runs on ytape's own kernels on every machine.
cli_test(plan_mlp EXIT 0 STDOUT ${CASES}/expected/plan_mlp.txt
         COMMAND ${YTAPE} plan ../../samples/tapes/mlp.json --threads 2)
cli_test(run_kernels_typo EXIT 2 STDOUT ${CASES}/empty.txt STDERR ${CASES}/expected/run_kernels_typo.err
         COMMAND ${YTAPE} run run/add.json --random --seed 3 --kernels fastt)
cli_test(run_output_file EXIT 0 COMMAND bash ${CASES}/run_output.sh ${YTAPE})
cli_test(run_profile EXIT 0 COMMAND bash ${CASES}/run_profile.sh ${YTAPE})
cli_test(run_carry EXIT 0 COMMAND bash ${CASES}/run_carry.sh ${YTAPE})
cli_test(run_guard_pass EXIT 0 STDOUT ${CASES}/expected/run_guard_pass.out
         COMMAND ${YTAPE} run run/guard.json --inputs run/positive.json)
cli_test(run_guard_fail EXIT 2 STDOUT ${CASES}/empty.txt STDERR ${CASES}/expected/run_guard_fail.err
         COMMAND ${YTAPE} run run/guard.json --inputs run/negative.json)

# ytape trace: a tape from a model program, run right after on the saved example inputs.
# Programs that must fail, each pinning its message, are the errors/ set (tests/errors).
cli_test(trace_tiny EXIT 0 STDOUT ${CASES}/expected/trace_tiny.json
         COMMAND ${YTAPE} trace trace/tiny.jl -f loss W x)
cli_test(trace_then_run EXIT 0 STDOUT ${CASES}/expected/trace_run.out
         COMMAND bash ${CASES}/trace_run.sh ${YTAPE})
cli_test(trace_include EXIT 0 STDOUT ${CASES}/expected/trace_include.txt
         COMMAND ${YTAPE} trace trace/include.jl -f f f32[2])
# Values nested 10^5 deep and more (built, written through, dropped) and containers inside
# themselves (printed as Julia's circular references, deep-copied): no stack overflow.
cli_test(trace_nested EXIT 0 STDERR ${CASES}/expected/trace_nested.err
         COMMAND ${YTAPE} trace trace/nested.jl -f f f32[])
# Hostile programs: reading outside the program's folder, FIFOs, devices, huge files,
# loops that never end; each refused within seconds, showing nothing of the file.
cli_test(trace_hostile EXIT 0 COMMAND bash ${CASES}/trace_hostile.sh ${YTAPE})
# The traced tapes of the samples in text form, pinned (golden tests of the samples and the
# prelude).
cli_test(trace_text_mlp EXIT 0 STDOUT ${CASES}/expected/trace_mlp.txt
         COMMAND bash ${CASES}/trace_show.sh ${YTAPE} ../../samples/mlp.jl loss model x labels)
cli_test(trace_text_basics EXIT 0 STDOUT ${CASES}/expected/trace_basics.txt
         COMMAND bash ${CASES}/trace_show.sh ${YTAPE} ../../samples/basics.jl main x)
cli_test(trace_text_resnet18 EXIT 0 STDOUT ${CASES}/expected/trace_resnet18.txt
         COMMAND bash ${CASES}/trace_show.sh ${YTAPE} ../../samples/resnet18.jl loss model image)

# ONNX import (tests/onnx/make_models.cc writes the models): the tape and weights run, the
# bytes are deterministic, a failed import writes nothing.
cli_test(onnx_import EXIT 0 COMMAND bash ${CASES}/onnx_import.sh ${YTAPE} $<TARGET_FILE:onnx_make_models>)
cli_test(onnx_export EXIT 0 COMMAND bash ${CASES}/onnx_export.sh ${YTAPE})
# ytape without ytape-onnx or the MPI module beside it says which is missing.
cli_test(companions EXIT 0 COMMAND bash ${CASES}/companions.sh ${YTAPE})
# export -> import -> diff: no difference, for forward, gradient and second-order tapes.
cli_test(onnx_round_trip EXIT 0 COMMAND bash ${CASES}/onnx_round_trip.sh ${YTAPE})
cli_test(escapes EXIT 0 COMMAND bash ${CASES}/escapes.sh ${YTAPE})
# Tensors take at most --max-memory at once: past it, a message instead of swapping.
cli_test(run_max_memory EXIT 2 STDOUT ${CASES}/empty.txt STDERR ${CASES}/expected/run_max_memory.err
         COMMAND ${YTAPE} run hostile/big.json --random --max-memory 1M)
# Tensor files: other dtypes (--dtype) and numpy's .npy and .npz written and read back into
# f32 inputs where exact; several --inputs merged; what does not fit named.
cli_test(tensor_files EXIT 0 STDOUT ${CASES}/expected/tensor_files.txt
         COMMAND bash ${CASES}/tensor_files.sh ${YTAPE})
# A program where a tape is read: the message says to trace it first.
cli_test(run_program EXIT 2 STDOUT ${CASES}/empty.txt STDERR ${CASES}/expected/run_program.err
         COMMAND ${YTAPE} run files/f.jl)
# run --profile-out: a Chrome trace of the profiled runs; --profile --by line.
cli_test(profile_out EXIT 0 STDOUT ${CASES}/expected/profile_out.txt
         COMMAND bash ${CASES}/profile_out.sh ${YTAPE})
