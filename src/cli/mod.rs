//! Command-line front ends. Each tool is a `run` function over argument strings and
//! output streams, so the binaries in `src/bin/` stay a few lines long and the tools
//! can be tested in-process.

pub mod bundler;
pub mod cl;
