#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| kb_fuzz::llm_reply::run(data));
