//! HTTPS with rustls: TLS 1.2 and 1.3 only (rustls has nothing older), the ring provider, the
//! certificate and key read from PEM files, and reloaded on SIGHUP without dropping connections.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use axum_server::tls_rustls::RustlsConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Builds a rustls server configuration from PEM files.
pub fn server_config(cert: &Path, key: &Path) -> anyhow::Result<rustls::ServerConfig> {
    let certs = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("reading certificates from {}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("parsing certificates in {}", cert.display()))?;
    if certs.is_empty() {
        anyhow::bail!("no certificate in {}", cert.display());
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("reading the private key {}", key.display()))?;
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
    .context("TLS protocol versions")?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .context("the certificate and key do not match")?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The live TLS configuration shared by both listeners.
#[derive(Clone)]
pub struct Tls {
    pub config: RustlsConfig,
    cert: PathBuf,
    key: PathBuf,
}

impl Tls {
    pub fn load(cert: &Path, key: &Path) -> anyhow::Result<Self> {
        let config = RustlsConfig::from_config(Arc::new(server_config(cert, key)?));
        Ok(Self {
            config,
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
        })
    }

    /// Re-reads the files; a bad new pair is logged and the old one kept.
    pub fn reload(&self) {
        match server_config(&self.cert, &self.key) {
            Ok(c) => {
                self.config.reload_from_config(Arc::new(c));
                tracing::info!("TLS certificate reloaded");
            }
            Err(e) => {
                tracing::error!(error = %format!("{e:#}"), "TLS reload failed; keeping the old certificate")
            }
        }
    }

    /// Reloads on every SIGHUP until the process ends.
    pub fn reload_on_sighup(&self) {
        #[cfg(unix)]
        {
            let tls = self.clone();
            tokio::spawn(async move {
                let Ok(mut hup) =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
                else {
                    return;
                };
                while hup.recv().await.is_some() {
                    tls.reload();
                }
            });
        }
    }
}
