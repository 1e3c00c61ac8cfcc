//! Outgoing HTTP from a cell: refused unless the host is granted.
//!
//! wasi:http is linked for every tool (toolchains such as componentize-py
//! import it even when a tool never uses it), so the decision is made per
//! request here: the request's host and port must match one of the tool's
//! granted patterns — `api.example.com` (its scheme's default port, 443 or
//! 80), `api.example.com:8443` (that port only), `*.example.org` (its
//! subdomains), `*` (any public host, on its scheme's default port; only a
//! user's explicit grant to a tool that asks for `*`; never this machine or
//! a private network named by address or `localhost`). With no grant every
//! request is refused with
//! `HTTP-request-denied`. Redirects are not followed by the host: a tool
//! that follows one makes a new request, checked like the first.
//!
//! Sizes are capped: a request body over [`MAX_REQUEST_BODY_BYTES`] or a
//! response body over [`MAX_RESPONSE_BODY_BYTES`] ends in
//! `HTTP-request-body-size` / `HTTP-response-body-size`. Time is bounded
//! by the tool's own timeout, and each wait by [`MAX_WAIT`].

use http_body_util::BodyExt;
use std::time::Duration;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

/// What a tool may send: far more than any API call, bounded so a tool
/// cannot stream the workspace out in one request.
pub const MAX_REQUEST_BODY_BYTES: u64 = 8 * 1024 * 1024;
/// What a tool may receive in one response: a large page or document; a
/// tool's memory limit is usually lower anyway.
pub const MAX_RESPONSE_BODY_BYTES: u64 = 32 * 1024 * 1024;
/// The longest wait for a connection, the first byte or the next byte,
/// whatever the tool asks: a stalled server fails the request, not the
/// whole call.
pub const MAX_WAIT: Duration = Duration::from_secs(30);

/// The hosts one cell may reach.
#[derive(Debug, Clone, Default)]
pub struct NetworkPolicy {
    allowed: Vec<String>,
}

impl NetworkPolicy {
    pub fn new(allowed: Vec<String>) -> Self {
        Self { allowed }
    }

    /// Whether `host` on `port` matches a granted pattern; `default_port`
    /// is the request's scheme's (443 or 80).
    pub fn allows(&self, host: &str, port: u16, default_port: u16) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.allowed.iter().any(|pattern| {
            let pattern = pattern.to_ascii_lowercase();
            let (name, wanted_port) = match pattern.rsplit_once(':') {
                Some((name, p)) => match p.parse::<u16>() {
                    Ok(p) => (name.to_string(), p),
                    Err(_) => return false,
                },
                None => (pattern.clone(), default_port),
            };
            let host_ok = (name == "*" && !is_local(&host))
                || match name.strip_prefix("*.") {
                    Some(domain) => {
                        host.len() > domain.len() + 1 && host.ends_with(&format!(".{domain}"))
                    }
                    None => host == name,
                };
            host_ok && port == wanted_port
        })
    }
}

/// Whether `host` names this machine or a private network by itself (an
/// IP literal in a loopback, private or link-local range, or `localhost`):
/// `*` does not reach those; a grant must name them. (A public name that
/// resolves to such an address is not caught here.)
fn is_local(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare == "localhost" || bare.ends_with(".localhost") {
        return true;
    }
    match bare.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => {
            ip.is_loopback() || ip.is_private() || ip.is_link_local() || ip.is_unspecified()
        }
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback()
                || ip.is_unspecified()
                || (ip.segments()[0] & 0xfe00) == 0xfc00
                || (ip.segments()[0] & 0xffc0) == 0xfe80
                || ip
                    .to_ipv4_mapped()
                    .is_some_and(|v4| v4.is_loopback() || v4.is_private() || v4.is_link_local())
        }
        Err(_) => false,
    }
}

type ResponseFuture = Box<
    dyn Future<
            Output = wasmtime_wasi_http::Result<(
                http::Response<WasiBody>,
                Box<dyn Future<Output = Result<(), Error>> + Send>,
            )>,
        > + Send,
>;

/// `body`, ending in the error `too_large` makes once more than `limit`
/// bytes passed.
fn capped(body: WasiBody, limit: u64, too_large: fn(Option<u64>) -> Error) -> WasiBody {
    let bytes = usize::try_from(limit).unwrap_or(usize::MAX);
    http_body_util::Limited::new(body, bytes)
        .map_err(move |e| match e.downcast::<Error>() {
            Ok(inner) => *inner,
            Err(_) => too_large(Some(limit)),
        })
        .boxed_unsync()
}

impl WasiHttpHooks for NetworkPolicy {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> ResponseFuture {
        let uri = request.uri();
        let host = uri.host().unwrap_or_default().to_string();
        let default_port = if uri.scheme_str() == Some("https") {
            443
        } else {
            80
        };
        let port = uri.port_u16().unwrap_or(default_port);
        if !self.allows(&host, port, default_port) {
            tracing::debug!(host, port, "outgoing HTTP request denied: not granted");
            return Box::new(async { Err(Error::HttpRequestDenied) });
        }
        let request =
            request.map(|body| capped(body, MAX_REQUEST_BODY_BYTES, Error::HttpRequestBodySize));
        let wait = |asked: Option<Duration>| Some(asked.map_or(MAX_WAIT, |d| d.min(MAX_WAIT)));
        let options = options.unwrap_or_default();
        let options = RequestOptions {
            connect_timeout: wait(options.connect_timeout),
            first_byte_timeout: wait(options.first_byte_timeout),
            between_bytes_timeout: wait(options.between_bytes_timeout),
        };
        let mut default_hooks = [(); 0];
        let sent = default_hooks.send_request(request, Some(options), fut);
        Box::new(async move {
            let (response, worker) = Box::into_pin(sent).await?;
            let response = response
                .map(|body| capped(body, MAX_RESPONSE_BODY_BYTES, Error::HttpResponseBodySize));
            Ok((response, worker))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let policy = NetworkPolicy::new(vec![
            "api.example.com".into(),
            "*.example.org".into(),
            "127.0.0.1:8080".into(),
        ]);
        assert!(policy.allows("api.example.com", 443, 443));
        assert!(policy.allows("API.example.com.", 80, 80));
        assert!(!policy.allows("api.example.com", 8443, 443), "another port");
        assert!(!policy.allows("evil-api.example.com", 443, 443));
        assert!(policy.allows("a.example.org", 443, 443));
        assert!(!policy.allows("example.org", 443, 443));
        assert!(!policy.allows("badexample.org", 443, 443));
        assert!(policy.allows("127.0.0.1", 8080, 80));
        assert!(!policy.allows("127.0.0.1", 8081, 80));
        assert!(!policy.allows("127.0.0.1", 80, 80));
        assert!(!NetworkPolicy::default().allows("localhost", 80, 80));
        let any = NetworkPolicy::new(vec!["*".into()]);
        assert!(any.allows("example.net", 443, 443));
        assert!(!any.allows("example.net", 8443, 443), "default ports only");
        for local in [
            "127.0.0.1",
            "localhost",
            "10.1.2.3",
            "169.254.169.254",
            "[::1]",
            "192.168.0.1",
        ] {
            assert!(!any.allows(local, 80, 80), "{local}");
        }
    }
}
