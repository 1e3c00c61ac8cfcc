//! Outgoing HTTP from a cell: refused unless the host is granted.
//!
//! wasi:http is linked for every tool (toolchains such as componentize-py
//! import it even when a tool never uses it), so the decision is made per
//! request here: the request's host must match one of the tool's granted
//! patterns (`api.example.com` exactly, `*.example.org` for its subdomains).
//! With no grant every request is refused with `HTTP-request-denied`.

use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

/// The hosts one cell may reach.
#[derive(Debug, Clone, Default)]
pub struct NetworkPolicy {
    allowed: Vec<String>,
}

impl NetworkPolicy {
    pub fn new(allowed: Vec<String>) -> Self {
        Self { allowed }
    }

    /// Whether `host` matches a granted pattern.
    pub fn allows(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.allowed
            .iter()
            .any(|pattern| match pattern.strip_prefix("*.") {
                Some(domain) => {
                    host.len() > domain.len() + 1 && host.ends_with(&format!(".{domain}"))
                }
                None => host == pattern.to_ascii_lowercase(),
            })
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

impl WasiHttpHooks for NetworkPolicy {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> ResponseFuture {
        let host = request.uri().host().unwrap_or_default().to_string();
        if !self.allows(&host) {
            tracing::debug!(host, "outgoing HTTP request denied: host not granted");
            return Box::new(async { Err(Error::HttpRequestDenied) });
        }
        let mut default_hooks = [(); 0];
        default_hooks.send_request(request, options, fut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let policy = NetworkPolicy::new(vec!["api.example.com".into(), "*.example.org".into()]);
        assert!(policy.allows("api.example.com"));
        assert!(policy.allows("API.example.com."));
        assert!(!policy.allows("evil-api.example.com"));
        assert!(policy.allows("a.example.org"));
        assert!(!policy.allows("example.org"));
        assert!(!policy.allows("badexample.org"));
        assert!(!NetworkPolicy::default().allows("localhost"));
    }
}
