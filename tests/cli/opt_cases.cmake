# ytape opt: the passes on a small tape where each has work, on the MLP sample's gradient,
# and the properties every run must have (idempotent, deterministic, effects kept).
set(BUSY opt/busy.json)
cli_test(opt_all EXIT 0 STDOUT ${CASES}/expected/opt_all.txt
         COMMAND bash -c "$0 opt ${BUSY} | $0 show -" ${YTAPE})
cli_test(opt_dce_only EXIT 0 STDOUT ${CASES}/expected/opt_dce_only.txt
         COMMAND bash -c "$0 opt ${BUSY} --passes dce | $0 show -" ${YTAPE})
cli_test(opt_stats EXIT 0 STDOUT ${CASES}/expected/opt_stats.txt
         COMMAND bash ${CASES}/opt_stats.sh ${YTAPE} ${BUSY})
cli_test(opt_unknown_pass EXIT 2 STDOUT ${CASES}/empty.txt STDERR ${CASES}/expected/opt_unknown_pass.err
         COMMAND ${YTAPE} opt ${BUSY} --passes dce,inlne)
# Effects survive: the optimized tape prints and guards as the original does.
cli_test(opt_keeps_effects EXIT 0 STDOUT ${CASES}/expected/run_guard_pass.out
         COMMAND bash -c "$0 opt run/guard.json | $0 run - --inputs run/positive.json" ${YTAPE})
# The gradient tape of the MLP sample, optimized, in text form.
cli_test(opt_grad_mlp EXIT 0 STDOUT ${CASES}/expected/opt_grad_mlp.txt
         COMMAND bash -c "$0 grad ../../samples/tapes/mlp.json | $0 opt - | $0 show -" ${YTAPE})
cli_test(opt_idempotent EXIT 0 COMMAND bash ${CASES}/opt_idempotent.sh ${YTAPE} ${BUSY})
cli_test(opt_idempotent_resnet18_grad EXIT 0
         COMMAND bash -c "$0 grad ../../samples/tapes/resnet18.json -o \"$1\" && bash $2 $0 \"$1\""
                 ${YTAPE} ${CMAKE_CURRENT_BINARY_DIR}/resnet18_grad.json ${CASES}/opt_idempotent.sh)
