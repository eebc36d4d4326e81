# ytape grad and ytape gradcheck.
cli_test(grad_not_scalar EXIT 2 STDOUT ${CASES}/empty.txt STDERR ${CASES}/expected/grad_not_scalar.err
         COMMAND ${YTAPE} grad grad/vector.json)
cli_test(grad_wrt_no_match EXIT 2 STDOUT ${CASES}/empty.txt STDERR ${CASES}/expected/grad_wrt_no_match.err
         COMMAND ${YTAPE} grad grad/vector.json --vjp --wrt model.w)
cli_test(grad_vjp EXIT 0 STDOUT ${CASES}/expected/grad_vjp.txt
         COMMAND bash -c "$0 grad grad/vector.json --vjp | $0 show -" ${YTAPE})
# The gradient tape of the MLP sample, in text form: a change in any rule it uses shows.
cli_test(grad_mlp EXIT 0 STDOUT ${CASES}/expected/grad_mlp.txt
         COMMAND bash -c "$0 grad ../../samples/tapes/mlp.json | $0 show -" ${YTAPE})
# A step of 0.5 errs by 4% of exp's gradient, and a hundredth of it (the smallest retried)
# by 4e-6: beyond a relative tolerance of 1e-9 at every step.
cli_test(gradcheck_detects_errors EXIT 1 STDOUT ${CASES}/expected/gradcheck_fails.out
         COMMAND ${YTAPE} gradcheck grad/vector.json --random --eps 0.5 --rtol 1e-9)
cli_test(gradcheck_eps_zero EXIT 2 STDOUT ${CASES}/empty.txt STDERR ${CASES}/expected/gradcheck_eps_zero.err
         COMMAND ${YTAPE} gradcheck run/add.json --random --eps 0)
cli_test(gradcheck_samples EXIT 0 STDOUT ${CASES}/expected/gradcheck_samples.out
         COMMAND bash ${CASES}/gradcheck_samples.sh ${YTAPE})
# gradcheck takes run's options (kernels, layouts, fusion, threads), with run's checks.
cli_test(gradcheck_run_options EXIT 0 STDOUT ${CASES}/expected/gradcheck_run_options.out
         COMMAND ${YTAPE} gradcheck grad/vector.json --random --kernels reference --fusion off
                 --layouts plain --threads 1)
cli_test(gradcheck_bad_fusion EXIT 2 STDOUT ${CASES}/empty.txt
         STDERR ${CASES}/expected/gradcheck_bad_fusion.err
         COMMAND ${YTAPE} gradcheck grad/vector.json --random --fusion of)
# ytape remat (docs/remat.md): budgets as a share and in bytes, policies; each result plans
# within its budget and gives the gradient tape's outputs byte for byte, its dropout not
# drawn again; bad requests name what to give.
cli_test(remat EXIT 0 STDOUT ${CASES}/expected/remat.txt COMMAND bash ${CASES}/remat.sh ${YTAPE})
# ytape vmap (docs/vmap.md): the small CNN's gradient (train-mode batch norm, dropout)
# batched over its data into per-example gradients; bad requests name what to give.
cli_test(vmap EXIT 0 STDOUT ${CASES}/expected/vmap.txt COMMAND bash ${CASES}/vmap.sh ${YTAPE})
# ytape jvp (docs/jvp.md): tangent inputs and outputs, forward over reverse; a bad --wrt.
cli_test(jvp EXIT 0 STDOUT ${CASES}/expected/jvp.txt COMMAND bash ${CASES}/jvp.sh ${YTAPE})
