//! The `postgres` backend's client: `search_service::pg`'s statements over Spin's
//! `spin:postgres/postgres@4.2.0` (the synchronous functions: the guest waits,
//! the host runs the query on its runtime).
//!
//! `postgres_url` may list several URLs (a primary and its streaming replicas):
//! the connection is opened to the first that answers and kept for the life of
//! the instance; when it breaks, the next query tries the list again from the
//! one after it, so a server that goes down costs one failed statement at most.

use std::sync::Mutex;

use search_service::pg::{redact, Sql, SqlError, Value};
use spin_sdk::pg::wit::postgres::{Connection, DbValue, Error, ParameterValue, QueryError};

/// The open connection and which URL it went to.
struct Open {
    at: usize,
    conn: Connection,
}

/// A lazily opened connection over a list of URLs.
pub struct SpinPg {
    urls: Vec<String>,
    open: Mutex<Option<Open>>,
}

impl SpinPg {
    pub fn new(urls: Vec<String>) -> SpinPg {
        SpinPg { urls, open: Mutex::new(None) }
    }

    /// Opens a connection, trying each URL once from `start` on.
    fn connect(&self, start: usize) -> Result<Open, SqlError> {
        let mut why = Vec::new();
        for k in 0..self.urls.len() {
            let at = (start + k) % self.urls.len();
            match Connection::open(&self.urls[at]) {
                Ok(conn) => return Ok(Open { at, conn }),
                Err(e) => why.push(format!("{}: {}", redact(&self.urls[at]), message(&e))),
            }
        }
        Err(SqlError::Connect(why.join("; ")))
    }
}

impl Sql for SpinPg {
    fn query(&self, statement: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, SqlError> {
        let mut guard = self.open.lock().map_err(|_| SqlError::Connect("connection lock poisoned".into()))?;
        let params: Vec<ParameterValue> = params.iter().map(param).collect();
        // At most two tries: the kept connection, then a fresh one (from the
        // next URL) if the kept one turned out to be broken.
        for attempt in 0..2 {
            let open = match guard.take() {
                Some(o) => o,
                None => self.connect(0)?,
            };
            match open.conn.query(statement, &params) {
                Ok(rows) => {
                    let out = rows.rows.into_iter().map(|r| r.into_iter().map(value).collect()).collect();
                    *guard = Some(open);
                    return Ok(out);
                }
                Err(Error::ConnectionFailed(m)) | Err(Error::QueryFailed(QueryError::Text(m))) if attempt == 0 => {
                    // Broken: try the others, starting after this one.
                    eprintln!("postgres: {} failed ({m}); reconnecting", redact(&self.urls[open.at]));
                    let next = (open.at + 1) % self.urls.len();
                    drop(open);
                    *guard = Some(self.connect(next)?);
                }
                Err(e) => {
                    let failed_connection = matches!(e, Error::ConnectionFailed(_));
                    if !failed_connection {
                        *guard = Some(open);
                    }
                    return Err(match e {
                        Error::ConnectionFailed(m) => SqlError::Connect(m),
                        e => SqlError::Query(message(&e)),
                    });
                }
            }
        }
        Err(SqlError::Connect("no server answered".into()))
    }
}

fn param(v: &Value) -> ParameterValue {
    match v {
        Value::Null => ParameterValue::DbNull,
        Value::Bool(b) => ParameterValue::Boolean(*b),
        Value::Int(i) => ParameterValue::Int32(*i),
        Value::BigInt(i) => ParameterValue::Int64(*i),
        Value::Real(f) => ParameterValue::Floating32(*f),
        Value::Double(f) => ParameterValue::Floating64(*f),
        Value::Text(s) => ParameterValue::Str(s.clone()),
        Value::IntArray(a) => ParameterValue::ArrayInt32(a.iter().copied().map(Some).collect()),
        Value::TextArray(a) => ParameterValue::ArrayStr(a.iter().cloned().map(Some).collect()),
    }
}

fn value(v: DbValue) -> Value {
    match v {
        DbValue::Boolean(b) => Value::Bool(b),
        DbValue::Int8(i) => Value::Int(i.into()),
        DbValue::Int16(i) => Value::Int(i.into()),
        DbValue::Int32(i) => Value::Int(i),
        DbValue::Int64(i) => Value::BigInt(i),
        DbValue::Floating32(f) => Value::Real(f),
        DbValue::Floating64(f) => Value::Double(f),
        DbValue::Str(s) => Value::Text(s),
        DbValue::ArrayInt32(a) => Value::IntArray(a.into_iter().flatten().collect()),
        DbValue::ArrayStr(a) => Value::TextArray(a.into_iter().flatten().collect()),
        // The statements return none of the others.
        _ => Value::Null,
    }
}

fn message(e: &Error) -> String {
    match e {
        Error::ConnectionFailed(m) | Error::BadParameter(m) | Error::ValueConversionFailed(m) | Error::Other(m) => {
            m.clone()
        }
        Error::QueryFailed(QueryError::Text(m)) => m.clone(),
        Error::QueryFailed(QueryError::DbError(d)) => format!("{} ({})", d.message, d.code),
    }
}
