# Region ops (docs/regions.md): a recurrent cell scanned over 16 steps, through every
# command. Its values are checked against the unrolled cell in tests/unit/runtime/scan_test.cc.
cli_test(regions_show EXIT 0 STDOUT ${CASES}/expected/regions_show.txt
         COMMAND ${YTAPE} show regions/rnn.json)
cli_test(regions_json_round_trip EXIT 0 STDOUT ${CASES}/regions/rnn.json
         COMMAND ${YTAPE} show --json regions/rnn.json)
cli_test(regions_stats EXIT 0 STDOUT ${CASES}/expected/regions_stats.txt
         COMMAND ${YTAPE} stats regions/rnn.json)
cli_test(regions_run EXIT 0 COMMAND ${YTAPE} run regions/rnn.json --random --repeat 3)
cli_test(regions_diff EXIT 1 STDOUT ${CASES}/expected/regions_diff.txt
         COMMAND ${YTAPE} diff regions/rnn.json regions/rnn_sigmoid.json)
cli_test(regions_diff_same EXIT 0 STDOUT ${CASES}/empty.txt
         COMMAND ${YTAPE} diff regions/rnn.json regions/rnn.json)
# The gradient: one backward scan whose body is the step's VJP; checked against finite
# differences in f64, to first and second order.
cli_test(regions_grad EXIT 0 STDOUT ${CASES}/expected/regions_grad.txt
         COMMAND bash -c "f=$(mktemp) && $0 grad regions/rnn_sum.json -o $f && $0 show $f && rm -f $f"
         ${YTAPE})
cli_test(regions_gradcheck EXIT 0 COMMAND ${YTAPE} gradcheck regions/rnn_sum.json --random)
cli_test(regions_gradcheck_second_order EXIT 0
         COMMAND bash -c "f=$(mktemp) && $0 grad regions/rnn_sum.json -o $f && $0 gradcheck $f --random && rm -f $f"
         ${YTAPE})
# ONNX export writes a scan as ONNX Scan; the model imports back as the same scan (ytape diff
# finds no change) and to the same values.
cli_test(regions_export_scan EXIT 0 STDOUT ${CASES}/expected/regions_export.out
         COMMAND bash -c "f=$(mktemp -d) && $0 export regions/rnn.json -o $f/rnn.onnx 2>&1 && $0 import $f/rnn.onnx -o $f/back.json && $0 diff regions/rnn.json $f/back.json | grep -c '^[-+] %' || true && $0 run regions/rnn.json --random --seed 3 && $0 run $f/back.json --random --seed 3 && rm -rf $f"
         ${YTAPE})
# ytape plan shows each body's own plan under its step, as the executor makes it.
cli_test(regions_plan EXIT 0 STDOUT ${CASES}/expected/regions_plan.txt
         COMMAND ${YTAPE} plan regions/rnn.json --threads 2)
# A loop in a program traced as a scan: one op whatever the sequence's length.
cli_test(regions_trace_loop EXIT 0 STDOUT ${CASES}/expected/regions_trace_loop.txt
         COMMAND bash -c "$0 trace regions/rnn_loop.jl -f cell f32[8,8] f32[8,4] f32[4,16] f32[8] | $0 show -"
         ${YTAPE})
cli_test(regions_trace_loop_flat EXIT 0 STDOUT ${CASES}/expected/regions_trace_loop_flat.txt
         COMMAND bash -c "$0 trace regions/rnn_loop.jl -f cell f32[8,8] f32[8,4] f32[4,16] f32[8] | $0 stats - | head -1 && $0 trace regions/rnn_loop.jl -f cell f32[8,8] f32[8,4] f32[4,256] f32[8] | $0 stats - | head -1 && $0 trace regions/rnn_loop.jl -f cell f32[8,8] f32[8,4] f32[4,4096] f32[8] | $0 stats - | head -1"
         ${YTAPE})
cli_test(regions_trace_unrolled EXIT 0 STDOUT ${CASES}/expected/regions_trace_unrolled.txt
         COMMAND bash -c "$0 trace regions/rnn_loop.jl -f cell f32[8,8] f32[8,4] f32[4,16] f32[8] --loops unroll | $0 stats - | head -1"
         ${YTAPE})
# run --profile shows the body's ops under a line naming its op as the printer does.
cli_test(regions_profile EXIT 0 STDOUT ${CASES}/expected/regions_profile.txt
         COMMAND bash -c "$0 run regions/rnn.json --random --repeat 2 --profile | grep 'trips per run'"
         ${YTAPE})
# A while on a traced condition and an if on a traced value (regions/newton.jl): one
# while_loop and one cond, traced from types alone; the same tape runs an input that needs
# 3 trips and one that needs 35, and differentiates through both; exported as ONNX Loop and
# If, it imports back as the same tape (ytape diff finds no change) and to the same values.
set(NEWTON_TAPE "$0 trace regions/newton.jl -f root f64[] f64[]")
cli_test(regions_newton_show EXIT 0 STDOUT ${CASES}/expected/regions_newton_show.txt
         COMMAND bash -c "${NEWTON_TAPE} | $0 show -" ${YTAPE})
cli_test(regions_newton_run EXIT 0 STDOUT ${CASES}/expected/regions_newton_run.txt
         COMMAND bash -c "f=$(mktemp) && ${NEWTON_TAPE} -o $f && $0 run $f --inputs regions/newton_near.json && $0 run $f --inputs regions/newton_far.json && $0 grad $f | $0 run - --inputs regions/newton_far.json && rm -f $f"
         ${YTAPE})
cli_test(regions_newton_gradcheck EXIT 0
         COMMAND bash -c "f=$(mktemp) && ${NEWTON_TAPE} -o $f && $0 gradcheck $f --inputs regions/newton_near.json && $0 gradcheck $f --inputs regions/newton_far.json && $0 grad $f | $0 gradcheck - --inputs regions/newton_near.json && rm -f $f"
         ${YTAPE})
cli_test(regions_export_onnx EXIT 0 STDOUT ${CASES}/expected/regions_newton_onnx.txt
         COMMAND bash -c "f=$(mktemp -d) && ${NEWTON_TAPE} -o $f/t.json && $0 export $f/t.json -o $f/t.onnx && $0 import $f/t.onnx -o $f/back.json && $0 stats $f/back.json | grep -E '^(while_loop|cond) ' | cut -c1-20 && $0 diff $f/t.json $f/back.json | grep -c '^[-+] %' || true && $0 run $f/back.json --inputs regions/newton_near.json && $0 run $f/back.json --inputs regions/newton_far.json && rm -rf $f"
         ${YTAPE})
# Loops exported from PyTorch (regions/torch_loops.py): a scripted for loop and a scripted
# while loop import as one while_loop each; Newton's runs as many trips as its input needs.
cli_test(regions_torch_loops EXIT 0 STDOUT ${CASES}/expected/regions_torch_loops.txt
         COMMAND bash -c "f=$(mktemp -d) && $0 import regions/torch_for_loop.onnx -o $f/for.json && $0 stats $f/for.json | grep -E '^(while_loop|scan) ' | cut -c1-20 && $0 run $f/for.json --random --seed 1 | cut -c1-40 && $0 import regions/torch_newton.onnx -o $f/newton.json && $0 stats $f/newton.json | grep -E '^while_loop ' | cut -c1-20 && $0 run $f/newton.json --inputs regions/torch_newton_far.json && rm -rf $f"
         ${YTAPE})
# Custom rules (docs/rules.md): Flux's xlogy rule and a clipping rule, traced, differentiated,
# checked (each rule alone, the disagreeing one named) and round-tripped through ONNX.
cli_test(regions_rules EXIT 0 STDOUT ${CASES}/expected/regions_rules.txt
         COMMAND bash ${CASES}/rules.sh ${YTAPE})
