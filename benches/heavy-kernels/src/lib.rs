//! Nothing but the library build.rs compiles (see build.rs).
