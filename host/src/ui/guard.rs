//! Who may ask the page, and what every answer carries.
//!
//! - The `Host` must be the loopback address and port the page serves (or
//!   `localhost` on it): a name that resolves to 127.0.0.1 on someone
//!   else's say (DNS rebinding) is refused.
//! - An `Origin`, when sent, must be the page itself.
//! - The token: in the URL once (`?token=…`). That request gets a cookie
//!   with another secret, for reading the pages, and is sent on to the same
//!   address with the token in its fragment (`#token=…`), where the page's
//!   script takes it into the page's own storage (of this origin: this
//!   port) and out of the address. A request with neither the cookie nor
//!   the token gets 401.
//! - A request that changes something carries the token in the
//!   `X-Toolcell-Token` header, which a form or an image on another site
//!   cannot send (no cross-site request forgery). The cookie is never
//!   enough for it, and no page holds the token: a browser sends the
//!   cookies of 127.0.0.1 to every port of it, so a server on another
//!   port could read the pages with it, but not approve or undo.
//! - Every answer forbids scripts, styles and frames from anywhere but the
//!   page, and is not cached.

use super::Ui;
use crate::util::secret::same_token;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The header a request that changes something carries the token in.
pub const TOKEN_HEADER: &str = "x-toolcell-token";

/// No script, style, image or frame from anywhere but the page; no inline
/// script at all, so text that slipped through as markup could not run.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

pub async fn guard(State(ui): State<Arc<Ui>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(|host| ui.hosts.iter().any(|h| h == host)) {
        return refuse(
            StatusCode::FORBIDDEN,
            "this page answers only to the address toolcell ui printed",
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        if !ui.origins.iter().any(|o| o == origin) {
            return refuse(
                StatusCode::FORBIDDEN,
                "a request from another site is refused",
            );
        }
    }
    if let Some(given) = query_token(request.uri().query()) {
        if !same_token(given, &ui.token) {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "the token in this address is not this page's: open the address toolcell ui printed",
            );
        }
        // The cookie, and the same address with the token in its
        // fragment, for the page's script. Always a path of this page:
        // `//elsewhere?token=…` leads to `/elsewhere`.
        let path = format!("/{}", request.uri().path().trim_start_matches(['/', '\\']));
        let rest = request
            .uri()
            .query()
            .map(without_token)
            .filter(|q| !q.is_empty());
        let to = match rest {
            Some(rest) => format!("{path}?{rest}#token={}", ui.token),
            None => format!("{path}#token={}", ui.token),
        };
        let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response();
        let cookie = format!(
            "{}={}; HttpOnly; SameSite=Strict; Path=/",
            ui.cookie, ui.session
        );
        if let Ok(cookie) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, cookie);
        }
        return with_policy(response);
    }
    let by_header = headers
        .get(TOKEN_HEADER)
        .and_then(|t| t.to_str().ok())
        .is_some_and(|t| same_token(t, &ui.token));
    let by_cookie = cookie_values(headers, &ui.cookie).any(|t| same_token(t, &ui.session));
    let reads = matches!(*request.method(), Method::GET | Method::HEAD);
    if reads && !(by_header || by_cookie) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "open the address toolcell ui printed (with its token)",
        );
    }
    if !reads && !by_header {
        return refuse(
            StatusCode::FORBIDDEN,
            "a request that changes something carries the page's token in X-Toolcell-Token",
        );
    }
    with_policy(next.run(request).await)
}

/// An answer that says why in plain text.
fn refuse(status: StatusCode, why: &str) -> Response {
    with_policy((status, format!("toolcell ui: {why}\n")).into_response())
}

fn with_policy(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// The `token` parameter of a query string.
fn query_token(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
}

/// A query string without its `token` parameter.
fn without_token(query: &str) -> String {
    query
        .split('&')
        .filter(|pair| !pair.starts_with("token=") && !pair.is_empty())
        .collect::<Vec<_>>()
        .join("&")
}

/// The values of every cookie named `name` the request carries: any may
/// be the page's (another page of 127.0.0.1 can set one of the same name
/// for a narrower path, which the browser sends first).
fn cookie_values<'a>(headers: &'a HeaderMap, name: &'a str) -> impl Iterator<Item = &'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(move |pair| pair.trim().strip_prefix(name)?.strip_prefix('='))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_found_in_queries_and_cookies_and_compared_whole() {
        assert_eq!(query_token(Some("a=1&token=abc&b=2")), Some("abc"));
        assert_eq!(query_token(Some("xtoken=abc")), None);
        assert_eq!(without_token("a=1&token=abc&b=2"), "a=1&b=2");
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("toolcell_80=planted; other=1; toolcell_80=abc"),
        );
        let values: Vec<&str> = cookie_values(&headers, "toolcell_80").collect();
        assert_eq!(values, ["planted", "abc"]);
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abd", "abc"));
        assert!(!same_token("ab", "abc"));
    }
}
