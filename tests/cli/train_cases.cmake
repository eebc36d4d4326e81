# ytape train: the digits end to end, resumption, and errors pinned to their messages.
set(DIGITS ../../samples/data)
cli_test(train_digits EXIT 0 COMMAND bash ${CASES}/train_digits.sh ${YTAPE})
cli_test(train_resume EXIT 0 COMMAND bash ${CASES}/train_resume.sh ${YTAPE})
cli_test(train_mlp EXIT 0 COMMAND bash ${CASES}/train_mlp.sh ${YTAPE})
cli_test(train_adam EXIT 0 COMMAND bash ${CASES}/train_adam.sh ${YTAPE})
cli_test(train_keep_last EXIT 0 COMMAND bash ${CASES}/train_keep_last.sh ${YTAPE})
cli_test(train_threads EXIT 0 COMMAND bash ${CASES}/train_threads.sh ${YTAPE})
cli_test(train_gpt EXIT 0 COMMAND bash ${CASES}/train_gpt.sh ${YTAPE} ${YTAPE_SANITIZE})
# Data parallelism over MPI: 2 ranks against one process, resumption, a killed rank.
cli_test(train_mpi EXIT 0 COMMAND bash ${CASES}/train_mpi.sh ${YTAPE})
cli_test(distribute EXIT 0 COMMAND bash ${CASES}/distribute.sh ${YTAPE})
# The converter's files hold what samples/data/README.md says: x in [0, 1] of ytape shape
# [8,8,1,N], the first sample the csv's first row / 16; y one-hot: in [0, 1], every column
# sums to 1 and the squares sum to N, so each column is one 1 and nines 0s; the per-class
# counts are the csv's labels counted (0: 151, 1: 151, 2: 150, ... in the first 1500).
cli_test(train_digits_train_file EXIT 0 STDOUT ${CASES}/expected/train_digits_train_file.out
         COMMAND ${YTAPE} run train/digits_check_1500.json --inputs ${DIGITS}/digits_train.safetensors)
cli_test(train_digits_test_file EXIT 0 STDOUT ${CASES}/expected/train_digits_test_file.out
         COMMAND ${YTAPE} run train/digits_check_297.json --inputs ${DIGITS}/digits_test.safetensors)
# The text's windows (scripts/make_text.py) hold what samples/data/README.md says: U8
# character numbers 1..60 read as i64, [65,N], the first window "The pr..." (31, 42, 39, 2,
# 50, 52), the training windows overlapping by half (the last 33 characters of each are
# the first 33 of the next: none differ).
cli_test(train_proverbs_train_file EXIT 0 STDOUT ${CASES}/expected/train_proverbs_train_file.out
         COMMAND ${YTAPE} run train/proverbs_check_2241.json --inputs ${DIGITS}/proverbs_train.safetensors)
cli_test(train_proverbs_test_file EXIT 0 STDOUT ${CASES}/expected/train_proverbs_test_file.out
         COMMAND ${YTAPE} run train/proverbs_check_126.json --inputs ${DIGITS}/proverbs_test.safetensors)
cli_test(train_mistyped_option EXIT 2 STDOUT ${CASES}/empty.txt
         STDERR ${CASES}/expected/train_mistyped_option.err
         COMMAND ${YTAPE} train train/step.json --data ${DIGITS}/digits_train.safetensors --epoch 3)
cli_test(train_missing_init EXIT 2 STDOUT ${CASES}/empty.txt
         STDERR ${CASES}/expected/train_missing_init.err
         COMMAND ${YTAPE} train train/step.json --data ${DIGITS}/digits_train.safetensors)
cli_test(train_data_mismatch EXIT 2 STDOUT ${CASES}/empty.txt
         STDERR ${CASES}/expected/train_data_mismatch.err
         COMMAND ${YTAPE} train run/add.json --data ${DIGITS}/digits_train.safetensors)
cli_test(train_eval_without_data EXIT 2 STDOUT ${CASES}/empty.txt
         STDERR ${CASES}/expected/train_eval_without_data.err
         COMMAND ${YTAPE} train train/step.json --data ${DIGITS}/digits_train.safetensors
                 --init train/init.safetensors --eval train/eval.json)
cli_test(train_eval_missing_input EXIT 2 STDOUT ${CASES}/empty.txt
         STDERR ${CASES}/expected/train_eval_missing_input.err
         COMMAND ${YTAPE} train train/step.json --data ${DIGITS}/digits_train.safetensors
                 --init train/init.safetensors --eval train/eval_extra.json
                 --eval-data ${DIGITS}/digits_test.safetensors)
cli_test(overwrite EXIT 0 COMMAND bash ${CASES}/overwrite.sh ${YTAPE})
