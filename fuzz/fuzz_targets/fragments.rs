#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| kb_fuzz::fragments::run(data));
