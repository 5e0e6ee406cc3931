//! Runs a `wasi:cli` command component under a chosen engine configuration, to
//! tell the engine's cost apart from the host's: `search-core`'s `encoder_bench`
//! run with wasmtime's defaults (what `wasmtime run` uses) and with the settings
//! `site-builder serve` uses (epoch interruption, async support) shows what each
//! setting costs the encoder.
//!
//! ```text
//! cargo run --release -p edge-host --example run_command -- \
//!     [--epoch] [--async-support] [--no-cow] [--perfmap] [--save-code FILE] FILE.wasm HOST_DIR [ARGS...]
//! ```
//!
//! `HOST_DIR` is preopened as `/model` in the guest; `ARGS` follow the program
//! name; the guest sees the host's environment (`QUERY=… run_command …` gives
//! `encoder_bench` its query). With `--epoch`, a thread ticks the epoch every 50 ms, as the host's does;
//! with `--async-support` too, the guest yields to the executor at every tick, as
//! in the host; without it, the deadline is only re-armed (the cost measured is
//! then the checks compiled into every loop). `--no-cow` copies the data segments
//! into each instance's memory instead of mapping them copy-on-write.
//! `--perfmap` writes `/tmp/perf-PID.map`, so that `perf record` / `perf report`
//! name the guest's functions. `--save-code FILE` writes the machine code the
//! engine compiled (an ELF file: `objdump -d FILE` shows what a kernel became).

use std::time::Duration;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store, UpdateDeadline};
use wasmtime_wasi::p2::bindings::sync::Command;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};

struct State {
    ctx: WasiCtx,
    table: ResourceTable,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.ctx, table: &mut self.table }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut flag = |name: &str| match args.iter().position(|a| a == name) {
        Some(i) => {
            args.remove(i);
            true
        }
        None => false,
    };
    let (epoch, async_support, no_cow) = (flag("--epoch"), flag("--async-support"), flag("--no-cow"));
    let perfmap = flag("--perfmap");
    let save_code = match args.iter().position(|a| a == "--save-code") {
        Some(i) if i + 1 < args.len() => {
            let path = args.remove(i + 1);
            args.remove(i);
            Some(path)
        }
        _ => None,
    };
    let [file, dir, rest @ ..] = args.as_slice() else {
        return Err(
            "usage: run_command [--epoch] [--async-support] [--no-cow] [--perfmap] [--save-code FILE] FILE.wasm HOST_DIR [ARGS...]".into(),
        );
    };

    let mut config = Config::new();
    config.wasm_component_model(true).epoch_interruption(epoch).memory_init_cow(!no_cow);
    if perfmap {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    let engine = Engine::new(&config)?;
    if epoch {
        let ticker = engine.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(50));
            ticker.increment_epoch();
        });
    }
    if let Some(path) = save_code {
        std::fs::write(path, engine.precompile_component(&std::fs::read(file)?)?)?;
    }
    let component = Component::from_file(&engine, file)?;
    let mut linker = Linker::<State>::new(&engine);
    let mut argv = vec![file.clone()];
    argv.extend(rest.iter().cloned());
    let ctx = WasiCtx::builder()
        .inherit_stdout()
        .inherit_stderr()
        .inherit_env()
        .args(&argv)
        .preopened_dir(dir, "/model", FsPerms::ReadOnly)?
        .build();
    let mut store = Store::new(&engine, State { ctx, table: ResourceTable::new() });
    if epoch && async_support {
        store.epoch_deadline_async_yield_and_update(1);
        store.set_epoch_deadline(1);
    } else if epoch {
        store.epoch_deadline_callback(|_| Ok(UpdateDeadline::Continue(1)));
        store.set_epoch_deadline(1);
    }
    if async_support {
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        rt.block_on(async {
            let command =
                wasmtime_wasi::p2::bindings::Command::instantiate_async(&mut store, &component, &linker).await?;
            command.wasi_cli_run().call_run(&mut store).await?.map_err(|()| "the program failed".into())
        })
    } else {
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        let command = Command::instantiate(&mut store, &component, &linker)?;
        command.wasi_cli_run().call_run(&mut store)?.map_err(|()| "the program failed".into())
    }
}
