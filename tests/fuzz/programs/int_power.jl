# A finding of the trace target (2026-12-02): 42^46 overflowed Int64 (UBSan). Julia's
# Int powers wrap around; so do ytape's.
f(x) = sum(x) * (42^46 % 7) + 3^-0 + 2^62 * 4
