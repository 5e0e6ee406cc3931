//! The host side of `spin:postgres/postgres@4.2.0`, Spin's outbound PostgreSQL
//! interface (`spin_sdk::pg`): the function's `postgres` search backend reads its
//! tenant through it.
//!
//! As in Spin, a connection may be opened only to a server the component's
//! `allowed_outbound_hosts` lists (`postgres://host[:port]`, every host of a
//! multi-host address checked); anything else is `connection-failed` with the
//! reason, before a socket is opened. Connections come from a pool per address
//! ([`Pools`], deadpool over tokio-postgres), so an instance's `open` costs no
//! handshake after the first.
//!
//! The function imports the synchronous `open`, `query` and `execute` (the guest
//! waits; here each is async on the runtime, so a slow server never stalls the
//! other instances); the `-async` variants and `connection-builder` are not
//! offered, and a component that imports them fails at load with the import named.
//! TLS follows the address's `sslmode`, as libpq's does: when it asks for TLS the
//! certificate and the host name are verified against the system's roots and
//! `--postgres-ca` ([`kb_common::pg_tls`]).

// The interface's `error` carries Postgres's structured error (as spin-sdk
// allows too): its size is the WIT's, not ours to shrink.
#![allow(clippy::result_large_err)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_postgres::types::{FromSql, ToSql, Type};
use wasmtime::component::{HasData, Linker, Resource};

use crate::outbound::AllowedHosts;
use crate::view::InterfaceView;

mod generated {
    wasmtime::component::bindgen!({
        inline: "
            package spin:postgres@4.2.0;

            interface postgres {
                variant error {
                    connection-failed(string),
                    bad-parameter(string),
                    query-failed(query-error),
                    value-conversion-failed(string),
                    other(string)
                }
                variant query-error {
                    text(string),
                    db-error(db-error),
                }
                record db-error {
                    as-text: string,
                    severity: string,
                    code: string,
                    message: string,
                    detail: option<string>,
                    extras: list<tuple<string, string>>,
                }
                variant db-data-type {
                    boolean, int8, int16, int32, int64, floating32, floating64, str, binary,
                    date, time, datetime, timestamp, uuid, jsonb, decimal,
                    range-int32, range-int64, range-decimal,
                    array-int32, array-int64, array-decimal, array-str,
                    interval,
                    other(string),
                }
                variant db-value {
                    boolean(bool),
                    int8(s8),
                    int16(s16),
                    int32(s32),
                    int64(s64),
                    floating32(f32),
                    floating64(f64),
                    str(string),
                    binary(list<u8>),
                    date(tuple<s32, u8, u8>),
                    time(tuple<u8, u8, u8, u32>),
                    datetime(tuple<s32, u8, u8, u8, u8, u8, u32>),
                    timestamp(s64),
                    uuid(string),
                    jsonb(list<u8>),
                    decimal(string),
                    range-int32(tuple<option<tuple<s32, range-bound-kind>>, option<tuple<s32, range-bound-kind>>>),
                    range-int64(tuple<option<tuple<s64, range-bound-kind>>, option<tuple<s64, range-bound-kind>>>),
                    range-decimal(tuple<option<tuple<string, range-bound-kind>>, option<tuple<string, range-bound-kind>>>),
                    array-int32(list<option<s32>>),
                    array-int64(list<option<s64>>),
                    array-decimal(list<option<string>>),
                    array-str(list<option<string>>),
                    interval(interval),
                    db-null,
                    unsupported(list<u8>),
                }
                variant parameter-value {
                    boolean(bool),
                    int8(s8),
                    int16(s16),
                    int32(s32),
                    int64(s64),
                    floating32(f32),
                    floating64(f64),
                    str(string),
                    binary(list<u8>),
                    date(tuple<s32, u8, u8>),
                    time(tuple<u8, u8, u8, u32>),
                    datetime(tuple<s32, u8, u8, u8, u8, u8, u32>),
                    timestamp(s64),
                    uuid(string),
                    jsonb(list<u8>),
                    decimal(string),
                    range-int32(tuple<option<tuple<s32, range-bound-kind>>, option<tuple<s32, range-bound-kind>>>),
                    range-int64(tuple<option<tuple<s64, range-bound-kind>>, option<tuple<s64, range-bound-kind>>>),
                    range-decimal(tuple<option<tuple<string, range-bound-kind>>, option<tuple<string, range-bound-kind>>>),
                    array-int32(list<option<s32>>),
                    array-int64(list<option<s64>>),
                    array-decimal(list<option<string>>),
                    array-str(list<option<string>>),
                    interval(interval),
                    db-null,
                }
                record interval {
                    micros: s64,
                    days: s32,
                    months: s32,
                }
                record column {
                    name: string,
                    data-type: db-data-type,
                }
                type row = list<db-value>;
                record row-set {
                    columns: list<column>,
                    rows: list<row>,
                }
                enum range-bound-kind {
                    inclusive,
                    exclusive,
                }

                resource connection {
                    open: static func(address: string) -> result<connection, error>;
                    query: func(statement: string, params: list<parameter-value>) -> result<row-set, error>;
                    execute: func(statement: string, params: list<parameter-value>) -> result<u64, error>;
                }
            }

            world host {
                import postgres;
            }
        ",
        with: {
            "spin:postgres/postgres.connection": super::Connection,
        },
        imports: { default: async | trappable },
    });
}

use generated::spin::postgres::postgres::{
    self as wit, Column, DbDataType, DbError, DbValue, Error, ParameterValue, QueryError, RowSet,
};

/// Most connections one instance may hold open at once.
const MAX_OPEN: usize = 8;
/// Connections kept per address (the host's instances share them).
const POOL_SIZE: usize = 16;
/// How long `open` waits for a connection (a server that does not answer).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why `open` refused an address or could not pool it: what the guest's
/// `connection-failed` says (the interface's error carries a string) and the
/// operator's log.
#[derive(Debug, thiserror::Error)]
enum ConnectError {
    #[error("the address is not a PostgreSQL URL or key=value string: {0}")]
    Address(#[source] tokio_postgres::Error),
    #[error("the address names no host")]
    NoHost,
    #[error("a Unix socket ({}) is not an outbound host; use host:port", .0.display())]
    UnixSocket(std::path::PathBuf),
    #[error("postgres://{host}:{port} is not in allowed_outbound_hosts (set postgres_allowed_outbound_host)")]
    NotAllowed { host: String, port: u16 },
    #[error("the pool lock is poisoned")]
    Poisoned,
    #[error("{0}")]
    Pool(#[source] deadpool_postgres::BuildError),
}

/// An open connection: a pooled client, returned to its pool when dropped.
pub struct Connection {
    client: deadpool_postgres::Object,
}

/// One pool per address, shared by every instance of the function.
#[derive(Clone)]
pub struct Pools {
    pools: Arc<Mutex<HashMap<String, deadpool_postgres::Pool>>>,
    /// Used when the address's `sslmode` asks for TLS ([`kb_common::pg_tls`]).
    tls: kb_common::pg_tls::MakeRustlsConnect,
}

impl Pools {
    /// Pools whose TLS connections trust the system's roots and `ca` (PEM).
    pub fn new(ca: Option<&std::path::Path>) -> Result<Pools, kb_common::pg_tls::PgTlsError> {
        Ok(Pools { pools: Arc::default(), tls: kb_common::pg_tls::connector(ca)? })
    }

    fn pool(&self, address: &str, config: tokio_postgres::Config) -> Result<deadpool_postgres::Pool, ConnectError> {
        let mut pools = self.pools.lock().map_err(|_| ConnectError::Poisoned)?;
        if let Some(p) = pools.get(address) {
            return Ok(p.clone());
        }
        let manager = deadpool_postgres::Manager::from_config(
            config,
            self.tls.clone(),
            deadpool_postgres::ManagerConfig { recycling_method: deadpool_postgres::RecyclingMethod::Fast },
        );
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(ConnectError::Pool)?;
        pools.insert(address.to_string(), pool.clone());
        Ok(pool)
    }
}

/// What the interface needs from the store data: the pools, the hosts this
/// component may connect to, the resource table the connections live in and how
/// many of them this instance holds open.
pub type PostgresView<'a> = InterfaceView<'a, Pools, AllowedHosts>;

/// Marks the store data's PostgreSQL view as what the interface reads.
pub struct SpinPostgres;

impl HasData for SpinPostgres {
    type Data<'a> = PostgresView<'a>;
}

/// The address parsed, and every host in it allowed; else why not.
fn admit(address: &str, allowed: &AllowedHosts) -> Result<tokio_postgres::Config, ConnectError> {
    let mut config: tokio_postgres::Config = address.parse().map_err(ConnectError::Address)?;
    let ports = config.get_ports().to_vec();
    if config.get_hosts().is_empty() {
        return Err(ConnectError::NoHost);
    }
    for (i, host) in config.get_hosts().iter().enumerate() {
        let name = match host {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            tokio_postgres::config::Host::Unix(p) => return Err(ConnectError::UnixSocket(p.clone())),
        };
        // One port for all hosts, or one per host, as libpq reads them.
        let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
        if !allowed.allows("postgres", &name, Some(port)) {
            return Err(ConnectError::NotAllowed { host: name, port });
        }
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    Ok(config)
}

impl wit::Host for PostgresView<'_> {}

impl wit::HostConnection for PostgresView<'_> {
    async fn open(&mut self, address: String) -> wasmtime::Result<Result<Resource<Connection>, Error>> {
        let config = match admit(&address, self.allowed) {
            Ok(c) => c,
            Err(why) => {
                eprintln!("postgres connection denied: {why}");
                return Ok(Err(Error::ConnectionFailed(why.to_string())));
            }
        };
        if *self.open >= MAX_OPEN {
            return Ok(Err(Error::ConnectionFailed(format!(
                "at most {MAX_OPEN} connections may be open at once; drop one first"
            ))));
        }
        let pool = match self.shared.pool(&address, config) {
            Ok(p) => p,
            Err(e) => return Ok(Err(Error::ConnectionFailed(e.to_string()))),
        };
        let client = match pool.get().await {
            Ok(c) => c,
            Err(e) => return Ok(Err(Error::ConnectionFailed(pool_error(&e)))),
        };
        Ok(Ok(self.push_open(Connection { client })?))
    }

    async fn query(
        &mut self,
        this: Resource<Connection>,
        statement: String,
        params: Vec<ParameterValue>,
    ) -> wasmtime::Result<Result<RowSet, Error>> {
        let params = match params.into_iter().map(to_sql).collect::<Result<Vec<_>, _>>() {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let client = &self.table.get(&this)?.client;
        // A fresh statement per query, as Spin's own host runs them: Postgres
        // plans it for these parameters. A cached statement turns generic after
        // five runs, and a generic plan of the BM25 statement measured 4x slower
        // on a million chunks (docs/benchmarks/postgres.md).
        let stmt = match client.prepare(&statement).await {
            Ok(s) => s,
            Err(e) => return Ok(Err(query_error(&e))),
        };
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)).collect();
        let rows = match client.query(&stmt, &refs).await {
            Ok(r) => r,
            Err(e) => return Ok(Err(query_error(&e))),
        };
        let columns: Vec<Column> = stmt
            .columns()
            .iter()
            .map(|c| Column { name: c.name().to_string(), data_type: data_type(c.type_()) })
            .collect();
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let mut values = Vec::with_capacity(row.len());
            for (i, c) in row.columns().iter().enumerate() {
                match db_value(row, i, c.type_()) {
                    Ok(v) => values.push(v),
                    Err(e) => return Ok(Err(e)),
                }
            }
            out.push(values);
        }
        Ok(Ok(RowSet { columns, rows: out }))
    }

    async fn execute(
        &mut self,
        this: Resource<Connection>,
        statement: String,
        params: Vec<ParameterValue>,
    ) -> wasmtime::Result<Result<u64, Error>> {
        let params = match params.into_iter().map(to_sql).collect::<Result<Vec<_>, _>>() {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let client = &self.table.get(&this)?.client;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)).collect();
        Ok(client.execute(statement.as_str(), &refs).await.map_err(|e| query_error(&e)))
    }

    async fn drop(&mut self, rep: Resource<Connection>) -> wasmtime::Result<()> {
        // The client goes back to its pool.
        self.drop_open(rep)
    }
}

fn pool_error(e: &deadpool_postgres::PoolError) -> String {
    match e {
        deadpool_postgres::PoolError::Backend(e) => describe(e),
        deadpool_postgres::PoolError::Timeout(_) => "the server did not answer in time".into(),
        e => e.to_string(),
    }
}

/// The error's message and its causes (tokio-postgres puts the reason in them).
fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_string();
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(&format!(": {c}"));
        src = c.source();
    }
    if let Some(h) = kb_common::pg_tls::hint(&s) {
        s.push_str(&format!(" ({h})"));
    }
    s
}

fn query_error(e: &tokio_postgres::Error) -> Error {
    match e.as_db_error() {
        Some(db) => Error::QueryFailed(QueryError::DbError(DbError {
            as_text: e.to_string(),
            severity: db.severity().to_string(),
            code: db.code().code().to_string(),
            message: db.message().to_string(),
            detail: db.detail().map(str::to_string),
            extras: Vec::new(),
        })),
        // No server error: the connection broke.
        None if e.is_closed() => Error::ConnectionFailed(describe(e)),
        None => Error::QueryFailed(QueryError::Text(describe(e))),
    }
}

type Param = Box<dyn ToSql + Sync + Send>;

/// A guest parameter as a client parameter. The statements cast their
/// parameters (`$1::int4`), so each Rust type meets the type it serialises to.
fn to_sql(p: ParameterValue) -> Result<Param, Error> {
    let unsupported =
        |what: &str| Err(Error::BadParameter(format!("{what} parameters are not supported by this host")));
    Ok(match p {
        ParameterValue::Boolean(v) => Box::new(v),
        ParameterValue::Int8(v) => Box::new(v),
        ParameterValue::Int16(v) => Box::new(v),
        ParameterValue::Int32(v) => Box::new(v),
        ParameterValue::Int64(v) => Box::new(v),
        ParameterValue::Floating32(v) => Box::new(v),
        ParameterValue::Floating64(v) => Box::new(v),
        ParameterValue::Str(v) => Box::new(v),
        ParameterValue::Binary(v) => Box::new(v),
        ParameterValue::Timestamp(v) => Box::new(v),
        ParameterValue::ArrayInt32(v) => Box::new(v),
        ParameterValue::ArrayInt64(v) => Box::new(v),
        ParameterValue::ArrayStr(v) => Box::new(v),
        ParameterValue::DbNull => Box::new(Option::<String>::None),
        ParameterValue::Jsonb(_) => return unsupported("jsonb"),
        ParameterValue::Date(_) | ParameterValue::Time(_) | ParameterValue::Datetime(_) => {
            return unsupported("date and time")
        }
        ParameterValue::Uuid(_) => return unsupported("uuid"),
        ParameterValue::Decimal(_) | ParameterValue::ArrayDecimal(_) => return unsupported("decimal"),
        ParameterValue::RangeInt32(_) | ParameterValue::RangeInt64(_) | ParameterValue::RangeDecimal(_) => {
            return unsupported("range")
        }
        ParameterValue::Interval(_) => return unsupported("interval"),
    })
}

fn data_type(t: &Type) -> DbDataType {
    match *t {
        Type::BOOL => DbDataType::Boolean,
        Type::CHAR => DbDataType::Int8,
        Type::INT2 => DbDataType::Int16,
        Type::INT4 => DbDataType::Int32,
        Type::INT8 => DbDataType::Int64,
        Type::FLOAT4 => DbDataType::Floating32,
        Type::FLOAT8 => DbDataType::Floating64,
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => DbDataType::Str,
        Type::BYTEA => DbDataType::Binary,
        Type::INT4_ARRAY => DbDataType::ArrayInt32,
        Type::INT8_ARRAY => DbDataType::ArrayInt64,
        Type::TEXT_ARRAY | Type::VARCHAR_ARRAY => DbDataType::ArrayStr,
        ref other => DbDataType::Other(other.name().to_string()),
    }
}

/// Any column's raw bytes, for the types this host does not convert (Spin
/// returns those as `unsupported`).
struct Raw(Vec<u8>);

impl<'a> FromSql<'a> for Raw {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Raw, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw.to_vec()))
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

fn db_value(row: &tokio_postgres::Row, i: usize, t: &Type) -> Result<DbValue, Error> {
    fn get<'a, T: FromSql<'a>>(row: &'a tokio_postgres::Row, i: usize) -> Result<Option<T>, Error> {
        row.try_get(i).map_err(|e| Error::ValueConversionFailed(format!("column {}: {e}", i + 1)))
    }
    let v = match *t {
        Type::BOOL => get::<bool>(row, i)?.map(DbValue::Boolean),
        Type::CHAR => get::<i8>(row, i)?.map(DbValue::Int8),
        Type::INT2 => get::<i16>(row, i)?.map(DbValue::Int16),
        Type::INT4 => get::<i32>(row, i)?.map(DbValue::Int32),
        Type::INT8 => get::<i64>(row, i)?.map(DbValue::Int64),
        Type::FLOAT4 => get::<f32>(row, i)?.map(DbValue::Floating32),
        Type::FLOAT8 => get::<f64>(row, i)?.map(DbValue::Floating64),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => get::<String>(row, i)?.map(DbValue::Str),
        Type::BYTEA => get::<Vec<u8>>(row, i)?.map(DbValue::Binary),
        Type::INT4_ARRAY => get::<Vec<Option<i32>>>(row, i)?.map(DbValue::ArrayInt32),
        Type::INT8_ARRAY => get::<Vec<Option<i64>>>(row, i)?.map(DbValue::ArrayInt64),
        Type::TEXT_ARRAY | Type::VARCHAR_ARRAY => get::<Vec<Option<String>>>(row, i)?.map(DbValue::ArrayStr),
        _ => get::<Raw>(row, i)?.map(|r| DbValue::Unsupported(r.0)),
    };
    Ok(v.unwrap_or(DbValue::DbNull))
}

/// Adds the interface to `linker`; `get` finds the PostgreSQL view in the store data.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> PostgresView<'_>,
) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, SpinPostgres>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variables::Variables;

    #[test]
    fn only_allowed_servers_are_reached() {
        let mut v = Variables::defaults();
        v.set("postgres_allowed_outbound_host", "postgres://db.example.edu:6432").unwrap();
        let allowed = AllowedHosts::resolve(crate::outbound::SEARCH_FN_ALLOWED_OUTBOUND_HOSTS, &v).unwrap();
        assert!(admit("postgres://kb@db.example.edu:6432/kb", &allowed).is_ok());
        assert!(admit("host=db.example.edu port=6432 user=kb", &allowed).is_ok());
        let e = admit("postgres://kb@db.example.edu/kb", &allowed).unwrap_err().to_string();
        assert!(e.contains("postgres://db.example.edu:5432") && e.contains("postgres_allowed_outbound_host"), "{e}");
        // Every host of a multi-host address must be allowed, not just the first.
        let e = admit("host=db.example.edu,evil.example.com port=6432", &allowed).unwrap_err();
        assert!(matches!(&e, ConnectError::NotAllowed { host, port: 6432 } if host == "evil.example.com"), "{e}");
        assert!(admit("host=/run/postgresql", &allowed).unwrap_err().to_string().contains("Unix socket"));
        assert!(matches!(admit("not a url", &allowed), Err(ConnectError::Address(_))));
    }
}
