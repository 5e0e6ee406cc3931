//! The edge function inside wasmtime: the engine, the linker that gives the
//! component what Spin gives it (WASI p2 CLI and p3 HTTP, Spin variables), and the
//! worker pool that routes requests to instances.
//!
//! A spin-sdk 7 component exports `wasi:http/handler@0.3.0` but imports
//! `wasi:cli/*@0.2` (environment, stdio, exit), so the p2 CLI interfaces are linked
//! beside p3 HTTP, as `wasmtime serve -Scli` does.
//!
//! Beside WASI, the linker gives the component the Spin interfaces it imports,
//! each in a module of its own with the same shape (an inline WIT `bindgen!`, a
//! `HasData` marker, an `add_to_linker` taking a getter into [`Host`]):
//! [`spin_variables`], [`wasi_key_value`], [`spin_postgres`] and [`spin_sqlite`].
//! Outbound HTTP goes through [`OutboundHooks`], which refuses origins outside
//! `allowed_outbound_hosts` as Spin does.
//!
//! Instances are reused (the function keeps its opened index and encoder between
//! requests), each serves one request at a time (the work is CPU-bound, so
//! interleaving requests in one instance would only queue them behind each other),
//! and a request that outlives the timeout is cut off and answered with a 504.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use wasmtime::component::{Component, GuestTaskId, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store, StoreContextMut};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::handler::{
    HandlerState, Instance, ProxyHandler, ProxyPre, ShouldAccept, WorkerExpiration, WorkerState, WorkerStatus,
};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

use crate::key_value::KeyValue;
use crate::outbound::AllowedHosts;
use crate::spin_postgres::{self, Pools, PostgresView};
use crate::spin_sqlite::{self, Databases, SqliteView};
use crate::spin_variables::{self, SharedVariables};
use crate::variables::Variables;
use crate::wasi_key_value::{self, KeyValueView};
use crate::HostError;

/// How many requests one instance serves before it is replaced (bounds the
/// effect of any leak in the guest).
const MAX_REQUESTS_PER_INSTANCE: usize = 1000;
/// How long an idle instance is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// How often the engine's epoch ticks: the granularity of the request timeout.
const EPOCH_TICK: Duration = Duration::from_millis(50);

/// Per-instance state.
pub struct Host {
    table: ResourceTable,
    wasi: WasiCtx,
    http: WasiHttpCtx,
    hooks: OutboundHooks,
    variables: SharedVariables,
    key_value: KeyValue,
    key_value_stores: Arc<[String]>,
    key_value_open: usize,
    postgres: Pools,
    postgres_open: usize,
    sqlite: Databases,
    sqlite_databases: Arc<[String]>,
    sqlite_open: usize,
}

impl Host {
    fn postgres(&mut self) -> PostgresView<'_> {
        PostgresView::new(&self.postgres, &self.hooks.allowed, &mut self.table, &mut self.postgres_open)
    }

    fn sqlite(&mut self) -> SqliteView<'_> {
        SqliteView::new(&self.sqlite, &self.sqlite_databases, &mut self.table, &mut self.sqlite_open)
    }

    fn key_value(&mut self) -> KeyValueView<'_> {
        KeyValueView::new(&self.key_value, &self.key_value_stores, &mut self.table, &mut self.key_value_open)
    }
}

/// Outbound HTTP as Spin allows it: only to the component's allowed hosts.
pub struct OutboundHooks {
    allowed: Arc<AllowedHosts>,
}

impl WasiHttpHooks for OutboundHooks {
    fn send_request(
        &mut self,
        request: http::Request<wasmtime_wasi_http::WasiBody>,
        options: Option<wasmtime_wasi_http::RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
    ) -> Box<
        dyn Future<
                Output = Result<
                    (
                        http::Response<wasmtime_wasi_http::WasiBody>,
                        Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
                    ),
                    wasmtime_wasi_http::Error,
                >,
            > + Send,
    > {
        if !self.allowed.allows_uri(request.uri()) {
            // The guest sees HTTP-request-denied, as under Spin; the operator sees why.
            eprintln!(
                "outbound request to {}://{} denied: not in allowed_outbound_hosts (set llm_allowed_outbound_host)",
                request.uri().scheme_str().unwrap_or("?"),
                request.uri().authority().map_or("?", |a| a.as_str())
            );
            return Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) });
        }
        wasmtime_wasi_http::default_hooks().send_request(request, options, fut)
    }
}

impl WasiView for Host {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for Host {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.hooks }
    }
}

/// The compiled function, ready to instantiate.
pub struct Function {
    engine: Engine,
    pre: ProxyPre<Host>,
    variables: SharedVariables,
    key_value: KeyValue,
    key_value_stores: Arc<[String]>,
    allowed_outbound: Arc<AllowedHosts>,
    postgres: Pools,
    sqlite: Databases,
    sqlite_databases: Arc<[String]>,
    request_timeout: Duration,
    next_instance: AtomicU64,
}

/// What the host gives a component besides WASI: its variables, the key-value
/// stores and SQLite databases it may open, and the origins it may send HTTP
/// requests to (templates, filled from the variables as Spin fills `spin.toml`'s).
pub struct Services {
    pub variables: Variables,
    pub key_value: KeyValue,
    pub key_value_stores: Vec<String>,
    pub sqlite: Databases,
    pub sqlite_databases: Vec<String>,
    pub allowed_outbound_hosts: Vec<String>,
    pub postgres: Pools,
}

/// One engine per process, its epoch ticking for as long as the process runs:
/// every host in the process (the tests start several) shares it and its
/// compiled components. A failure is kept too, and every caller gets it.
fn engine() -> Result<Engine, &'static wasmtime::Error> {
    static ENGINE: OnceLock<Result<Engine, wasmtime::Error>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut config = Config::new();
            config.wasm_component_model(true).wasm_component_model_async(true).epoch_interruption(true);
            let engine = Engine::new(&config)?;
            let ticker = engine.clone();
            std::thread::spawn(move || loop {
                std::thread::sleep(EPOCH_TICK);
                ticker.increment_epoch();
            });
            Ok(engine)
        })
        .as_ref()
        .cloned()
}

/// Compiles `path`, or returns the component compiled from the same file before.
fn compile(engine: &Engine, path: &Path) -> Result<Component, HostError> {
    type Key = (PathBuf, u64, Option<SystemTime>);
    static COMPILED: Mutex<Vec<(Key, Component)>> = Mutex::new(Vec::new());
    let read_err = |source| HostError::Read { path: path.to_path_buf(), source };
    let meta = std::fs::metadata(path).map_err(read_err)?;
    let key: Key = (path.to_path_buf(), meta.len(), meta.modified().ok());
    if let Some((_, c)) = COMPILED.lock().ok().and_then(|m| m.iter().find(|(k, _)| *k == key).cloned()) {
        return Ok(c);
    }
    let bytes = std::fs::read(path).map_err(read_err)?;
    let component = Component::new(engine, &bytes)
        .map_err(|e| HostError::Component { path: path.to_path_buf(), message: format!("{e:#}") })?;
    if let Ok(mut m) = COMPILED.lock() {
        m.push((key, component.clone()));
    }
    Ok(component)
}

impl Function {
    /// Compiles the component at `path` (once per process) and links it.
    pub fn load(path: &Path, services: Services, request_timeout: Duration) -> Result<Function, HostError> {
        let Services {
            variables,
            key_value,
            key_value_stores,
            sqlite,
            sqlite_databases,
            allowed_outbound_hosts,
            postgres,
        } = services;
        let allowed_outbound = AllowedHosts::resolve(&allowed_outbound_hosts, &variables)
            .map_err(|e| HostError::Component { path: path.to_path_buf(), message: e.to_string() })?;
        let wasm_err =
            |e: wasmtime::Error| HostError::Component { path: path.to_path_buf(), message: format!("{e:#}") };
        let engine =
            engine().map_err(|e| HostError::Component { path: path.to_path_buf(), message: format!("{e:#}") })?;
        let component = compile(&engine, path)?;
        let mut linker = Linker::<Host>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(wasm_err)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker).map_err(wasm_err)?;
        wasmtime_wasi::p3::add_to_linker(&mut linker).map_err(wasm_err)?;
        wasmtime_wasi_http::p3::add_to_linker(&mut linker).map_err(wasm_err)?;
        spin_variables::add_to_linker(&mut linker, |h: &mut Host| &*h.variables).map_err(wasm_err)?;
        wasi_key_value::add_to_linker(&mut linker, Host::key_value).map_err(wasm_err)?;
        spin_postgres::add_to_linker(&mut linker, Host::postgres).map_err(wasm_err)?;
        spin_sqlite::add_to_linker(&mut linker, Host::sqlite).map_err(wasm_err)?;
        let pre = linker.instantiate_pre(&component).map_err(wasm_err)?;
        let pre = match wasmtime_wasi_http::p3::bindings::ServicePre::new(pre.clone()) {
            Ok(p3) => ProxyPre::P3(p3),
            Err(_) => ProxyPre::P2(wasmtime_wasi_http::p2::bindings::ProxyPre::new(pre).map_err(|e| {
                HostError::Component {
                    path: path.to_path_buf(),
                    message: format!(
                        "it exports neither wasi:http/handler@0.3 nor wasi:http/incoming-handler@0.2: {e:#}"
                    ),
                }
            })?),
        };
        Ok(Function {
            engine,
            pre,
            variables: Arc::new(variables),
            key_value,
            key_value_stores: key_value_stores.into(),
            allowed_outbound: Arc::new(allowed_outbound),
            postgres,
            sqlite,
            sqlite_databases: sqlite_databases.into(),
            request_timeout,
            next_instance: AtomicU64::new(0),
        })
    }

    /// The handler that queues requests onto instances of this function.
    pub fn into_handler(self) -> ProxyHandler<Function> {
        ProxyHandler::new(self)
    }

    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }
}

impl HandlerState for Function {
    type StoreData = Host;
    type WorkerExpiration = Expiration;
    type WorkerState = Worker;

    async fn instantiate(&self) -> wasmtime::Result<Instance<Host, Expiration, Worker>> {
        let id = self.next_instance.fetch_add(1, Ordering::Relaxed);
        let mut wasi = WasiCtxBuilder::new();
        wasi.inherit_stdout().inherit_stderr();
        let host = Host {
            table: ResourceTable::new(),
            wasi: wasi.build(),
            http: WasiHttpCtx::new(),
            hooks: OutboundHooks { allowed: self.allowed_outbound.clone() },
            variables: self.variables.clone(),
            key_value: self.key_value.clone(),
            key_value_stores: self.key_value_stores.clone(),
            key_value_open: 0,
            postgres: self.postgres.clone(),
            postgres_open: 0,
            sqlite: self.sqlite.clone(),
            sqlite_databases: self.sqlite_databases.clone(),
            sqlite_open: 0,
        };
        let mut store = Store::new(&self.engine, host);
        // Yield to the host at every epoch tick, so the request timeout can fire
        // even while the guest computes without awaiting anything.
        store.epoch_deadline_async_yield_and_update(1);
        store.set_epoch_deadline(1);
        let proxy = self.pre.instantiate_async(&mut store).await?;
        Ok(Instance {
            store,
            proxy,
            view: WasiHttpView::http,
            expiration: Expiration {
                idle: IDLE_TIMEOUT,
                // A little later than the request's own timer, so the request is
                // answered as timed out before its instance is torn down.
                busy: self.request_timeout + Duration::from_secs(1),
                sleep: Box::pin(tokio::time::sleep(Duration::MAX)),
            },
            state: Worker { id, request_timeout: self.request_timeout },
        })
    }
}

/// One instance's bookkeeping.
pub struct Worker {
    id: u64,
    request_timeout: Duration,
}

impl WorkerState for Worker {
    type StoreData = Host;
    type RequestData = ();

    fn should_accept_request(&self, concurrent: usize, total: usize) -> ShouldAccept {
        if total >= MAX_REQUESTS_PER_INSTANCE {
            ShouldAccept::Never
        } else if concurrent >= 1 {
            ShouldAccept::No
        } else {
            ShouldAccept::Yes
        }
    }

    fn on_request_start(
        &self,
        _store: StoreContextMut<'_, Host>,
        _data: (),
        _task: GuestTaskId,
    ) -> Pin<Box<dyn Future<Output = ()> + 'static + Send + Sync>> {
        Box::pin(tokio::time::sleep(self.request_timeout))
    }

    fn drop(&self, _store: Store<Host>, result: wasmtime::Result<()>) {
        if let Err(e) = result {
            eprintln!("edge function instance {} stopped: {e:#}", self.id);
        }
    }
}

/// When an instance is retired: idle too long, or busy past the request timeout
/// (the second line of defence the handler's documentation asks for).
pub struct Expiration {
    idle: Duration,
    busy: Duration,
    sleep: Pin<Box<tokio::time::Sleep>>,
}

impl WorkerExpiration for Expiration {
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>, status: WorkerStatus, start: Instant) -> Poll<()> {
        let limit = match status {
            WorkerStatus::Idle => self.idle,
            WorkerStatus::Requests | WorkerStatus::PostReturn => self.busy,
        };
        let Some(deadline) = start.checked_add(limit) else { return Poll::Pending };
        let deadline = tokio::time::Instant::from_std(deadline);
        if self.sleep.deadline() != deadline {
            self.sleep.as_mut().reset(deadline);
        }
        self.sleep.as_mut().poll(cx)
    }
}
