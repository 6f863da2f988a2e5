//! Compressed bundles that LLVM mishandles or cannot read, hand-built; ours alone is run.
//! Each case pins the exact outcome: status, stderr, outputs (and that an error leaves no
//! output file).
