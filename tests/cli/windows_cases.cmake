# Attributes that make windows far larger than the data (issue #42): a pooling window of
# 2^30 columns padded by 2^30 - 1 over 4 reads the 4 (it took hours), and stats counts that;
# convolutions whose stride or dilation oneDNN refuses run on ytape's kernels (exit 3
# before), blocked images and gradients included.
cli_test(pool_huge_window EXIT 0 STDOUT ${CASES}/expected/pool_huge_window.out
         STDERR ${CASES}/empty.txt COMMAND ${YTAPE} run windows/pool_huge_window.json --random)
cli_test(pool_huge_window_reference EXIT 0 STDOUT ${CASES}/expected/pool_huge_window.out
         COMMAND ${YTAPE} run windows/pool_huge_window.json --random --kernels reference
                 --layouts plain)
cli_test(pool_huge_window_stats EXIT 0 STDOUT ${CASES}/expected/pool_huge_window_stats.txt
         COMMAND ${YTAPE} stats windows/pool_huge_window.json)
# The gradient counts each pixel's wins: exact, where the loss's sum is not across machines.
cli_test(pool_huge_window_grad EXIT 0 STDOUT ${CASES}/expected/pool_huge_window_grad.out
         COMMAND bash -c "$0 grad windows/pool_huge_window_loss.json | $0 run - --random | grep grad"
                 ${YTAPE})
cli_test(conv_refused_by_onednn EXIT 0 STDERR ${CASES}/empty.txt
         COMMAND ${YTAPE} run windows/conv_refused.json --random)
cli_test(conv_refused_by_onednn_grad EXIT 0 STDERR ${CASES}/empty.txt
         COMMAND bash -c "$0 grad windows/conv_refused.json | $0 run - --random" ${YTAPE})
