# ytape diff, dot and stats. ${YTAPE} is the binary; paths are relative to tests/cli.

# diff: the same tape, a renumbered and reordered one (sparse var ids, inputs and independent
# ops in another order), from standard input too: no difference, exit 0, no output.
cli_test(diff_identical EXIT 0 STDOUT ${CASES}/empty.txt
         COMMAND ${YTAPE} diff ${MLP} ${MLP})
cli_test(diff_renumbered EXIT 0 STDOUT ${CASES}/empty.txt
         COMMAND ${YTAPE} diff diff/layer.json diff/layer_renumbered.json)
cli_test(diff_stdin EXIT 0 STDOUT ${CASES}/empty.txt STDIN ${CASES}/diff/layer_renumbered.json
         COMMAND ${YTAPE} diff diff/layer.json -)
cli_test(diff_same_json EXIT 0 STDOUT ${CASES}/expected/diff_same.json
         COMMAND ${YTAPE} diff --json diff/layer.json diff/layer_renumbered.json)
# One op inserted at the top is one added line.
cli_test(diff_inserted EXIT 1 STDOUT ${CASES}/expected/diff_inserted.txt
         COMMAND ${YTAPE} diff diff/layer.json diff/layer_inserted.json)
# An activation, a constant, an output and the metadata changed: text, --stat, --json.
cli_test(diff_edited EXIT 1 STDOUT ${CASES}/expected/diff_edited.txt
         COMMAND ${YTAPE} diff diff/layer.json diff/layer_edited.json)
cli_test(diff_edited_stat EXIT 1 STDOUT ${CASES}/expected/diff_edited_stat.txt
         COMMAND ${YTAPE} diff --stat diff/layer.json diff/layer_edited.json)
cli_test(diff_edited_json EXIT 1 STDOUT ${CASES}/expected/diff_edited.json
         COMMAND ${YTAPE} diff --json diff/layer.json diff/layer_edited.json)
# samples/mlp.jl with one activation changed: only that op, then only it and its gradient
# ops after ytape grad.
cli_test(diff_mlp_one_line EXIT 0 STDOUT ${CASES}/expected/diff_mlp.txt
         COMMAND bash ${CASES}/diff_mlp.sh ${YTAPE})
# Bad input is exit 2.
cli_test(diff_missing_file EXIT 2 STDOUT ${CASES}/empty.txt STDERR ${CASES}/expected/missing_file.err
         COMMAND ${YTAPE} diff diff/layer.json no/such/tape.json)
cli_test(diff_malformed EXIT 2 STDOUT ${CASES}/empty.txt STDERR ${CASES}/malformed/dangling_var.err
         COMMAND ${YTAPE} diff malformed/dangling_var.json diff/layer.json)
# --stat --json: the JSON report's summary and counts alone.
cli_test(diff_stat_json EXIT 1 STDOUT ${CASES}/expected/diff_stat_json.json
         COMMAND ${YTAPE} diff --stat --json diff/layer.json diff/layer_edited.json)

# dot: a small tape, pinned; -o writes the same text to a file.
cli_test(dot_layer EXIT 0 STDOUT ${CASES}/expected/dot_layer.dot COMMAND ${YTAPE} dot diff/layer.json)
cli_test(dot_output_file EXIT 0 STDOUT ${CASES}/expected/dot_layer.dot
         COMMAND bash -c "f=$(mktemp) && $0 dot diff/layer.json -o $f && cat $f && rm -f $f" ${YTAPE})

# stats: op counts, FLOPs, parameters and the runtime plan's memory, pinned.
cli_test(stats_layer EXIT 0 STDOUT ${CASES}/expected/stats_layer.txt COMMAND ${YTAPE} stats diff/layer.json)
cli_test(stats_mlp EXIT 0 STDOUT ${CASES}/expected/stats_mlp.txt COMMAND ${YTAPE} stats ${MLP})
# diff for review: Markdown reports (an activation swapped, a layer widened, an edit in a
# loop shown once with its count), --fail-on thresholds.
cli_test(diff_review EXIT 0 STDOUT ${CASES}/expected/diff_review.txt
         COMMAND bash ${CASES}/diff_review.sh ${YTAPE})
