#![no_main]
// The body lives in `offload_fuzz_targets`, shared with the smoke test.
libfuzzer_sys::fuzz_target!(|data: &[u8]| offload_fuzz_targets::nv_fatbin(data));
