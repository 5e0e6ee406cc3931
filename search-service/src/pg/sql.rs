//! What a client provides: one statement run with its parameters ([`Sql`]),
//! the values Spin's interface carries ([`Value`]), its errors, and the text
//! forms of an address (without its password) and of a vector.

/// A database address (a URL or a key=value string) without its password, for
/// messages and logs; the CLI and the function both print addresses through it.
pub fn redact(url: &str) -> String {
    if !url.contains("://") {
        return url
            .split_whitespace()
            .map(|kv| if kv.starts_with("password=") { "password=***" } else { kv })
            .collect::<Vec<_>>()
            .join(" ");
    }
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => match url[s + 3..at].split_once(':') {
            Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
            None => url.to_string(),
        },
        _ => url.to_string(),
    }
}

/// A parameter or a column value: what Spin's PostgreSQL interface carries and
/// these statements use.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i32),
    BigInt(i64),
    Real(f32),
    Double(f64),
    Text(String),
    IntArray(Vec<i32>),
    TextArray(Vec<String>),
}

impl Value {
    pub(super) fn int(&self) -> Option<i32> {
        match *self {
            Value::Int(v) => Some(v),
            Value::BigInt(v) => i32::try_from(v).ok(),
            _ => None,
        }
    }

    pub(super) fn big(&self) -> Option<i64> {
        match *self {
            Value::Int(v) => Some(v.into()),
            Value::BigInt(v) => Some(v),
            _ => None,
        }
    }

    pub(super) fn real(&self) -> Option<f32> {
        match *self {
            Value::Real(v) => Some(v),
            Value::Double(v) => Some(v as f32),
            _ => None,
        }
    }

    pub(super) fn text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// Why a statement failed, as the client reports it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SqlError {
    /// No connection could be made (refused, unreachable, not allowed).
    #[error("cannot connect to PostgreSQL: {0}")]
    Connect(String),
    /// The server refused the statement.
    #[error("PostgreSQL: {0}")]
    Query(String),
}

/// Runs one statement and returns its rows. The edge function's client opens its
/// connection lazily and fails over between URLs; that is the client's business.
pub trait Sql: Send + Sync {
    fn query(&self, statement: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, SqlError>;
}

/// A vector as pgvector's text form (`[0.1,0.2,…]`), each value in Rust's
/// shortest round-trip form, so Postgres parses back the same `f32`.
pub fn vector_text(v: &[f32]) -> String {
    let mut s = String::with_capacity(v.len() * 12 + 2);
    s.push('[');
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        // NaN or infinity cannot be stored; a zero keeps the statement valid.
        let x = if x.is_finite() { *x } else { 0.0 };
        s.push_str(&format!("{x}"));
    }
    s.push(']');
    s
}
