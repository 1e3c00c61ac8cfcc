//! `[[mcp_server]]` tables with a `url`: servers reached over Streamable
//! HTTP, not started. What may be sent to them is checked here: an
//! `http(s)` URL without credentials or a query, `https://` unless on this
//! machine when secrets are sent, and secrets named by environment
//! variable only.

use super::RawMcpServer;
use crate::util::problem::{Problem, Table};
use std::collections::BTreeMap;

/// A server reached at a URL rather than started: what to send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteEndpoint {
    /// `http://` or `https://` (`https://` unless on this machine, when
    /// secrets are sent), without credentials or a query in it.
    pub url: String,
    /// The variable whose value is sent as `Authorization: Bearer …`.
    pub bearer_token_env: Option<String>,
    /// Header name → the variable whose value it carries.
    pub header_envs: BTreeMap<String, String>,
}

/// Headers the transport sets itself, which a config may not set.
const TRANSPORT_HEADERS: &[&str] = &[
    "accept",
    "authorization",
    "connection",
    "content-encoding",
    "content-length",
    "content-type",
    "expect",
    "host",
    "keep-alive",
    "last-event-id",
    "mcp-protocol-version",
    "mcp-session-id",
    "proxy-authorization",
    "te",
    "transfer-encoding",
    "upgrade",
];

/// Whether `url` names this machine (a loopback address or `localhost`):
/// the only place a secret may go over plain `http://`.
pub fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|address| address.is_loopback())
}

/// The endpoint of a server given by `url`, checked: one of `command` and
/// `url`, no key about starting a program beside a `url`, an `http(s)`
/// URL without credentials in it, and secrets named by variable only.
pub(super) fn remote_endpoint(
    raw: &RawMcpServer,
    at: &Table,
) -> Result<Option<RemoteEndpoint>, Problem> {
    let name = &raw.name;
    let Some(url) = &raw.url else {
        for (key, given) in [
            ("bearer_token_env_var", raw.bearer_token_env_var.is_some()),
            ("env_http_headers", raw.env_http_headers.is_some()),
        ] {
            if given {
                return Err(at.problem(
                    Some(key),
                    format!("mcp_server `{name}`: `{key}` is for a server reached at a `url`"),
                    format!("remove `{key}`, or give the server's `url` instead of `command`"),
                ));
            }
        }
        return Ok(None);
    };
    let for_programs = [
        ("command", raw.command.is_some()),
        ("args", raw.args.is_some()),
        ("env", raw.env.is_some()),
        ("cwd", raw.cwd.is_some()),
        ("fs", raw.fs.is_some()),
        ("network", raw.network.is_some()),
        ("read", raw.read.is_some()),
        ("write", raw.write.is_some()),
        ("sandbox", raw.sandbox.is_some()),
    ];
    if let Some((key, _)) = for_programs.iter().find(|(_, given)| *given) {
        return Err(at.problem(
            Some(key),
            format!(
                "mcp_server `{name}`: `{key}` is for a server toolcell starts, but this one is reached at its `url`"
            ),
            format!("remove `{key}`, or remove `url` to start the server with `command`"),
        ));
    }
    let bad_url = |why: String| {
        at.problem(
            Some("url"),
            format!("mcp_server `{name}`: url {why}"),
            "write the server's endpoint, such as \"http://127.0.0.1:8931/mcp\"; give a token with `bearer_token_env_var`",
        )
    };
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| bad_url(format!("`{}` is not a URL ({e})", url.escape_debug())))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(bad_url(format!(
            "`{}` is not an http:// or https:// address",
            url.escape_debug()
        )));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(bad_url(
            "holds a user name or password: a secret does not belong in toolcell.toml".into(),
        ));
    }
    if parsed.query().is_some() {
        return Err(bad_url(
            "has a query (`?…`): a key in the address would be written in toolcell.toml and shown wherever the server is named; send it in a header from a variable with `env_http_headers`".into(),
        ));
    }
    let sends_secrets = raw.bearer_token_env_var.is_some()
        || raw.env_http_headers.as_ref().is_some_and(|h| !h.is_empty());
    if sends_secrets && parsed.scheme() == "http" && !is_loopback(&parsed) {
        return Err(bad_url(format!(
            "`{}` is plain http to another machine, where its token or headers would travel unencrypted; use https://",
            url.escape_debug()
        )));
    }
    let env_name = |key: &str, variable: &str| {
        if crate::util::names::is_env_name(variable) {
            Ok(())
        } else {
            Err(at.problem(
                Some(key),
                format!(
                    "mcp_server `{name}`: `{}` is not an environment variable name",
                    variable.escape_debug()
                ),
                format!("`{key}` names the variable that holds the secret, such as \"DOCS_TOKEN\", never the secret itself"),
            ))
        }
    };
    if let Some(variable) = &raw.bearer_token_env_var {
        env_name("bearer_token_env_var", variable)?;
    }
    let header_envs = raw.env_http_headers.clone().unwrap_or_default();
    let mut seen = std::collections::BTreeSet::new();
    for (header, variable) in &header_envs {
        if !seen.insert(header.to_ascii_lowercase()) {
            return Err(at.problem(
                Some("env_http_headers"),
                format!(
                    "mcp_server `{name}`: the header `{}` is named twice (header names ignore case)",
                    header.escape_debug()
                ),
                "keep one of them",
            ));
        }
        let reserved = TRANSPORT_HEADERS.contains(&header.to_ascii_lowercase().as_str());
        if reserved || http::HeaderName::from_bytes(header.as_bytes()).is_err() {
            return Err(at.problem(
                Some("env_http_headers"),
                format!(
                    "mcp_server `{name}`: `{}` {}",
                    header.escape_debug(),
                    if reserved {
                        "is a header the transport sets itself"
                    } else {
                        "is not an HTTP header name"
                    }
                ),
                "name other headers, such as \"X-Api-Key\"; a bearer token goes in `bearer_token_env_var`",
            ));
        }
        env_name("env_http_headers", variable)?;
    }
    Ok(Some(RemoteEndpoint {
        // As it is sent: what a prompt shows is the address used.
        url: parsed.to_string(),
        bearer_token_env: raw.bearer_token_env_var.clone(),
        header_envs,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::McpServerConfig;
    use super::super::tests::{raw, table};

    #[test]
    fn a_server_at_a_url_takes_its_secrets_from_the_environment_only() {
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str| McpServerConfig::from_raw(raw(text), &table(text), dir.path());
        let err = |text: &str| load(text).unwrap_err().to_string();
        let server = load(
            "name = \"docs\"\nurl = \"https://docs.example/mcp\"\nbearer_token_env_var = \"DOCS_TOKEN\"\nenv_http_headers = { \"X-Api-Key\" = \"DOCS_KEY\" }",
        )
        .unwrap();
        let remote = server.remote.as_ref().unwrap();
        assert_eq!(remote.bearer_token_env.as_deref(), Some("DOCS_TOKEN"));
        assert_eq!(remote.header_envs["X-Api-Key"], "DOCS_KEY");
        assert_eq!(server.command_line(), "https://docs.example/mcp");
        assert!(
            server.program_files().is_empty(),
            "nothing of it to protect"
        );
        assert!(!server.is_started());

        assert!(err("name = \"d\"").contains("neither `command` nor `url`"));
        let both = err("name = \"d\"\ncommand = \"x\"\nurl = \"http://h/mcp\"");
        assert!(
            both.contains("t.toml:2:11 at key `mcp_server.command`")
                && both.contains("`command` is for a server toolcell starts"),
            "{both}"
        );
        for key in [
            "args = []",
            "env = {}",
            "sandbox = \"none\"",
            "read = []",
            "fs = \"write\"",
        ] {
            let name = key.split(' ').next().unwrap();
            assert!(
                err(&format!("name = \"d\"\nurl = \"http://h/mcp\"\n{key}"))
                    .contains(&format!("`{name}` is for a server toolcell starts")),
                "{key}"
            );
        }
        assert!(err("name = \"d\"\nurl = \"ftp://h/mcp\"").contains("not an http:// or https://"));
        assert!(err("name = \"d\"\nurl = \"not a url\"").contains("is not a URL"));
        assert!(
            err("name = \"d\"\nurl = \"http://me:pw@h/mcp\"")
                .contains("a secret does not belong in toolcell.toml")
        );
        let literal =
            err("name = \"d\"\nurl = \"https://h/mcp\"\nbearer_token_env_var = \"sk-123 secret\"");
        assert!(literal.contains("never the secret itself"), "{literal}");
        assert!(
            err(
                "name = \"d\"\nurl = \"https://h/mcp\"\nenv_http_headers = { Authorization = \"T\" }"
            )
            .contains("a header the transport sets itself")
        );
        assert!(
            err("name = \"d\"\nurl = \"https://h/mcp\"\nenv_http_headers = { \"Bad Header\" = \"T\" }")
                .contains("not an HTTP header name")
        );
        assert!(
            err("name = \"d\"\ncommand = \"x\"\nbearer_token_env_var = \"T\"")
                .contains("is for a server reached at a `url`")
        );
        assert!(err("name = \"d\"\nurl = \"https://h/mcp?api_key=k\"").contains("has a query"));
        let odd = load("name = \"d\"\nurl = \"https://h/m\\u001b[31m\"").unwrap();
        assert_eq!(
            odd.command_line(),
            "https://h/m%1B[31m",
            "shown as it is sent, no escape in it"
        );
        let cleartext =
            err("name = \"d\"\nurl = \"http://h.example/mcp\"\nbearer_token_env_var = \"T\"");
        assert!(cleartext.contains("use https://"), "{cleartext}");
        for here in [
            "http://127.0.0.1:9/mcp",
            "http://localhost:9/mcp",
            "http://[::1]:9/mcp",
        ] {
            let text = format!("name = \"d\"\nurl = \"{here}\"\nbearer_token_env_var = \"T\"");
            assert!(load(&text).is_ok(), "{here} is this machine");
        }
        assert!(
            err("name = \"d\"\nurl = \"https://h/mcp\"\nenv_http_headers = { Connection = \"T\" }")
                .contains("a header the transport sets itself")
        );
        assert!(
            err("name = \"d\"\nurl = \"https://h/mcp\"\nenv_http_headers = { \"X-Key\" = \"A\", \"x-key\" = \"B\" }")
                .contains("named twice")
        );
    }
}
