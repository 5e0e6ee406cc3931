//! Test fixture: a Spin HTTP component that misbehaves on purpose. `/api/panic`
//! panics, `/api/trap` executes `unreachable`, `/api/loop` computes forever; any
//! other path answers `ok`. The edge tests host it to check that a fault in a
//! function reaches the user as a prompt JSON error, never as a hang, and that the
//! host keeps serving. Empty on native targets.

#[cfg(target_arch = "wasm32")]
mod component {
    use spin_sdk::http::{IntoResponse, Request};

    #[spin_sdk::http_service]
    async fn handle(req: Request) -> impl IntoResponse {
        match req.uri().path() {
            "/api/panic" => panic!("deliberate panic"),
            "/api/trap" => core::arch::wasm32::unreachable(),
            "/api/loop" => {
                let mut x = 0u64;
                loop {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            }
            _ => "ok".to_string(),
        }
    }
}
