//! TLS for the PostgreSQL clients: the local host's `spin:postgres`, `publish`
//! and `eval --postgres`. One owner, so the three trust the same certificates.
//!
//! The URL's `sslmode` decides whether TLS is used, as tokio-postgres reads it:
//! `disable` never, `prefer` (the default) when the server offers it, `require`
//! always. Whenever TLS is used the server's certificate is verified against
//! the system's roots (`SSL_CERT_FILE` and `SSL_CERT_DIR` are honoured) and any
//! CA file the user adds, and its name against the host in the URL. That is
//! stricter than libpq's `require`, which encrypts without verifying, and it is
//! what Spin's own host does (native TLS with the system's roots): a URL that
//! connects here connects there, and a managed database's private CA (RDS,
//! Azure, Cloud SQL publish theirs) is added rather than verification turned off.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
pub use tokio_postgres_rustls::MakeRustlsConnect;

#[derive(Debug, thiserror::Error)]
pub enum PgTlsError {
    #[error("cannot read the PostgreSQL CA file {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("{path} holds no PEM certificate (-----BEGIN CERTIFICATE-----); give the CA that signed the server's certificate")]
    NoCertificate { path: PathBuf },
    #[error("the certificate in {path} is not usable as a CA: {message}")]
    Unusable { path: PathBuf, message: String },
    #[error("TLS could not be set up: {0}")]
    Setup(String),
}

/// A connector that trusts the system's roots and the certificates of `ca`
/// (a PEM file), for every connection whose `sslmode` asks for TLS.
pub fn connector(ca: Option<&Path>) -> Result<MakeRustlsConnect, PgTlsError> {
    let mut roots = rustls::RootCertStore::empty();
    // A system without a certificate store still connects to servers whose CA
    // is given; errors in individual system certificates are not the user's.
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    if let Some(path) = ca {
        let read = |e: &dyn std::fmt::Display| PgTlsError::Read { path: path.to_path_buf(), message: e.to_string() };
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
            .map_err(|e| read(&e))?
            .collect::<Result<_, _>>()
            .map_err(|e| read(&e))?;
        if certs.is_empty() {
            return Err(PgTlsError::NoCertificate { path: path.to_path_buf() });
        }
        for c in certs {
            roots.add(c).map_err(|e| PgTlsError::Unusable { path: path.to_path_buf(), message: e.to_string() })?;
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| PgTlsError::Setup(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// What to do about a connection error's text, when TLS is why it failed.
pub fn hint(error: &str) -> Option<&'static str> {
    if error.contains("invalid peer certificate") || error.contains("UnknownIssuer") {
        Some("the server's certificate is not signed by a trusted CA: give its CA file (--postgres-ca FILE, or SSL_CERT_FILE)")
    } else if error.contains("NotValidForName") {
        Some("the server's certificate does not name the host in the URL: connect by the name the certificate has")
    } else if error.contains("server does not support TLS") {
        Some("the URL asks for TLS (sslmode=require) and the server does not offer it: enable ssl on the server, or use sslmode=prefer")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_must_hold_a_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        assert!(matches!(connector(Some(&missing)), Err(PgTlsError::Read { .. })));
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = connector(Some(&empty)).err().unwrap();
        assert!(matches!(e, PgTlsError::NoCertificate { .. }), "{e}");
        assert!(e.to_string().contains("empty.pem"));
        assert!(connector(None).is_ok());
    }

    #[test]
    fn tls_failures_say_what_to_do() {
        assert!(hint("error performing TLS handshake: invalid peer certificate: UnknownIssuer")
            .unwrap()
            .contains("--postgres-ca"));
        assert!(hint("server does not support TLS").unwrap().contains("sslmode"));
        assert!(hint("password authentication failed").is_none());
    }
}
