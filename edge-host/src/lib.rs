//! The local host of the edge function: the very `search_fn.wasm` that `spin.toml`
//! deploys, run in wasmtime (the engine Spin is built on) beside the static site,
//! with Spin variables from the environment or a `.env` file.
//!
//! - [`spin_variables`]: the `spin:variables` interface the component imports,
//!   over the variables [`kb_common::variables`] reads from `SPIN_VARIABLE_*` and `.env`;
//! - [`key_value`], [`wasi_key_value`]: Spin's key-value stores in a SQLite file
//!   of the state folder, and the `wasi:keyvalue` interface (with its atomic
//!   increment) over them;
//! - [`spin_sqlite`]: the `spin:sqlite` interface, over a SQLite file of the state
//!   folder (`sqlite_db.db`, as `spin up` names it);
//! - [`outbound`]: `allowed_outbound_hosts`, enforced on the component's requests;
//! - [`view`]: what those interfaces read from an instance's store data;
//! - [`component`]: engine, linker and the pool of reusable instances;
//! - [`static_files`]: the site folder, served like Spin's fileserver;
//! - [`server`]: HTTP/1.1, `/api/*` to the function and the rest to the site.
//!
//! `site-builder serve` is the command-line front; the integration tests start the
//! same [`server::Server`] on an ephemeral port.

pub mod component;
pub mod key_value;
pub mod outbound;
pub mod server;
pub mod spin_postgres;
pub mod spin_sqlite;
pub mod spin_variables;
pub mod static_files;
pub mod view;
pub mod wasi_key_value;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub use kb_common::variables::{self, Variables};
pub use server::{Limits, Server};

/// What to serve, and where.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// The built site (`OUT/site`).
    pub site: PathBuf,
    /// The compiled component (`search_fn.wasm`).
    pub component: PathBuf,
    pub addr: SocketAddr,
    pub variables: Variables,
    /// Where state lives between runs (`.spin/`, as `spin up` keeps it): the
    /// key-value database and the SQLite database `default`.
    pub state: PathBuf,
    /// The component's `allowed_outbound_hosts`, `{{ variable }}` templates
    /// allowed ([`outbound::SEARCH_FN_ALLOWED_OUTBOUND_HOSTS`] for `search-fn`).
    pub allowed_outbound_hosts: Vec<String>,
    /// The key-value stores the component may open (`key_value_stores`).
    pub key_value_stores: Vec<String>,
    /// The SQLite databases the component may open (`sqlite_databases`); of
    /// these, only `default` exists here (others need Spin's runtime config).
    pub sqlite_databases: Vec<String>,
    /// The most bytes each SQLite database may grow to, as a platform's quota
    /// caps it (writes past it are `database-full`); `None`: no cap.
    pub sqlite_max_bytes: Option<u64>,
    /// A request the function has not answered by then gets a 504.
    pub request_timeout: Duration,
    /// Header and body deadlines and the per-client cap on API requests in flight.
    pub limits: Limits,
    /// One line per request on stderr.
    pub log: bool,
    /// PEM certificates trusted for PostgreSQL over TLS besides the system's
    /// roots (a managed database's CA); see [`kb_common::pg_tls`].
    pub postgres_ca: Option<PathBuf>,
}

impl HostConfig {
    /// The host for `search-fn` as `spin.toml` describes it (its allowed outbound
    /// hosts, the `default` key-value store and the `default` SQLite database, no
    /// size cap), on 127.0.0.1:3000 with a 60 s request timeout, the default
    /// [`Limits`] and no request log; change the fields as needed.
    pub fn search_fn(site: PathBuf, component: PathBuf, variables: Variables, state: PathBuf) -> HostConfig {
        HostConfig {
            site,
            component,
            addr: SocketAddr::from(([127, 0, 0, 1], 3000)),
            variables,
            state,
            allowed_outbound_hosts: outbound::SEARCH_FN_ALLOWED_OUTBOUND_HOSTS.iter().map(|s| s.to_string()).collect(),
            key_value_stores: vec!["default".into()],
            sqlite_databases: vec!["default".into()],
            sqlite_max_bytes: None,
            request_timeout: Duration::from_secs(60),
            limits: Limits::default(),
            log: false,
            postgres_ca: None,
        }
    }
}

/// Why the host could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Variables(#[from] kb_common::variables::VariablesError),
    #[error("{} has no index.html; build the site first (`site-builder build --out OUT`) and pass --out OUT", site.display())]
    NoSite { site: PathBuf },
    #[error("{} does not exist; build the component with `cargo build --release --target wasm32-wasip2 -p search-fn` (scripts/run does), or pass --component", path.display())]
    NoComponent { path: PathBuf },
    #[error("{}: not a usable component: {message}", path.display())]
    Component { path: PathBuf, message: String },
    #[error("cannot listen on {addr}: {source}; is another server using it? Pass --addr to choose another")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error(transparent)]
    KeyValue(#[from] key_value::KeyValueError),
    #[error(transparent)]
    PostgresTls(#[from] kb_common::pg_tls::PgTlsError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

/// A server running on its own thread and runtime; stops when dropped.
pub struct Running {
    addr: SocketAddr,
    state: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<(), HostError>>>,
}

impl Running {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR` without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The state folder (the key-value and SQLite databases) this server keeps.
    pub fn state(&self) -> &std::path::Path {
        &self.state
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, HostError> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(HostError::Runtime)
}

/// Starts a server in the background (tests; `addr` may use port 0).
pub fn spawn(cfg: HostConfig) -> Result<Running, HostError> {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let state = cfg.state.clone();
    let thread = std::thread::spawn(move || {
        let rt = runtime()?;
        rt.block_on(async move {
            let server = match Server::bind(cfg) {
                Ok(s) => s,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return Ok(());
                }
            };
            let _ = ready_tx.send(Ok(server.local_addr()));
            server
                .run(async {
                    let _ = stop_rx.await;
                })
                .await
        })
    });
    match ready_rx.recv() {
        Ok(Ok(addr)) => Ok(Running { addr, state, stop: Some(stop_tx), thread: Some(thread) }),
        Ok(Err(e)) => Err(e),
        Err(_) => match thread.join() {
            Ok(Err(e)) => Err(e),
            _ => Err(HostError::Runtime(std::io::Error::other("the server thread ended before it started"))),
        },
    }
}

/// Serves in the foreground until Ctrl-C; `on_ready` sees the bound address.
pub fn serve(cfg: HostConfig, on_ready: impl FnOnce(SocketAddr)) -> Result<(), HostError> {
    runtime()?.block_on(async move {
        let server = Server::bind(cfg)?;
        on_ready(server.local_addr());
        server
            .run(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
    })
}
