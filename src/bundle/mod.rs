//! Bundles
