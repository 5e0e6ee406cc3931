//! The TLS end of a PostgreSQL connection, in front of a test server.
//!
//! The wheel's PostgreSQL is built without OpenSSL ("SSL is not supported by
//! this build"), so TLS is terminated here, as pgbouncer's `client_tls_*` or a
//! managed service's proxy terminates it: the client sends PostgreSQL's
//! SSLRequest, gets `S`, and does the TLS handshake with this certificate; the
//! decrypted bytes go to the real server. A client that does not ask for TLS
//! gets the FATAL error a server with only `hostssl` lines in pg_hba.conf sends.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;

/// SSLRequest's and GSSENCRequest's codes (the protocol's "version" field).
const SSL_REQUEST: u32 = 80_877_103;
const GSSENC_REQUEST: u32 = 80_877_104;

/// A listener on a free loopback port; stops with the process.
pub struct TlsProxy {
    pub port: u16,
}

impl TlsProxy {
    /// Terminates TLS with `cert` and `key` (PEM) and forwards to 127.0.0.1:`backend`.
    pub fn start(cert: &str, key: &str, backend: u16) -> TlsProxy {
        use rustls::pki_types::pem::PemObject;
        let certs =
            rustls::pki_types::CertificateDer::pem_slice_iter(cert.as_bytes()).collect::<Result<Vec<_>, _>>().unwrap();
        let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = TcpListener::from_std(listener).unwrap();
                loop {
                    let Ok((client, _)) = listener.accept().await else { continue };
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        let _ = serve(client, acceptor, SocketAddr::from(([127, 0, 0, 1], backend))).await;
                    });
                }
            });
        });
        TlsProxy { port }
    }
}

async fn serve(mut client: TcpStream, acceptor: tokio_rustls::TlsAcceptor, backend: SocketAddr) -> std::io::Result<()> {
    loop {
        let len = client.read_u32().await?;
        let code = client.read_u32().await?;
        match code {
            GSSENC_REQUEST => client.write_all(b"N").await?,
            SSL_REQUEST if len == 8 => {
                client.write_all(b"S").await?;
                let mut tls = acceptor.accept(client).await?;
                let mut server = TcpStream::connect(backend).await?;
                tokio::io::copy_bidirectional(&mut tls, &mut server).await?;
                return Ok(());
            }
            _ => {
                // A startup message in the clear: refused as PostgreSQL refuses it.
                let mut fields = Vec::new();
                for (tag, value) in [
                    (b'S', "FATAL"),
                    (b'V', "FATAL"),
                    (b'C', "28000"),
                    (b'M', "no pg_hba.conf entry for host \"127.0.0.1\", no encryption"),
                ] {
                    fields.push(tag);
                    fields.extend_from_slice(value.as_bytes());
                    fields.push(0);
                }
                fields.push(0);
                let mut msg = vec![b'E'];
                msg.extend_from_slice(&(fields.len() as u32 + 4).to_be_bytes());
                msg.extend_from_slice(&fields);
                client.write_all(&msg).await?;
                return Ok(());
            }
        }
    }
}
