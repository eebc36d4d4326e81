# Dogfooding: every sample traced, differentiated and optimized now gives the tapes
# committed in samples/golden/, compared by `ytape diff` (scripts/tape_goldens.sh).
cli_test(sample_pipeline_goldens EXIT 0 COMMAND bash ${CASES}/../../scripts/tape_goldens.sh ${YTAPE})
