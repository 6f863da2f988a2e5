//! CLIs
