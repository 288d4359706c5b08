//! The TLS client settings the sinks share: rustls with the `ring` provider (chosen
//! explicitly, so nothing depends on a process-wide default provider), trusting either the
//! webpki roots (Mozilla's list, compiled in) or the CA certificates of a PEM file.

use std::sync::Arc;

use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};

/// The certificates of a PEM CA file (`-----BEGIN CERTIFICATE-----` blocks; other text is
/// skipped), each checked to be usable as a trust anchor. An error for a file that is not
/// PEM, holds no certificate or one that cannot be parsed.
pub(crate) fn ca_certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("CA file is not valid PEM: {e}"))?;
    if certs.is_empty() {
        return Err("CA file holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into());
    }
    let mut check = RootCertStore::empty();
    for (i, cert) in certs.iter().enumerate() {
        check.add(cert.clone()).map_err(|e| format!("CA file: certificate {} is not usable: {e}", i + 1))?;
    }
    Ok(certs)
}

/// A client configuration trusting the CA certificates of `ca_pem` only, or the webpki roots
/// when there is none; no client certificate.
pub(crate) fn client_config(ca_pem: Option<&[u8]>) -> Result<ClientConfig, String> {
    let mut roots = RootCertStore::empty();
    match ca_pem {
        Some(pem) => {
            for cert in ca_certificates(pem)? {
                roots.add(cert).map_err(|e| format!("CA file: {e}"))?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    Ok(ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS settings: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}
