gzbench codec -e 1e-4 --mb 64 --reps 3
