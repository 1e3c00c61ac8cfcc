//! The rules for the names toolcell hands to models and programs: tool
//! names, MCP server names and the `server__tool` function names made of
//! them, environment variable names, host patterns and program names.
//! Every layer that checks a name asks here, so a name valid in one file is
//! valid in all.

/// Longest tool name: the limit OpenAI-compatible servers put on function names.
const MAX_NAME_LEN: usize = 64;
/// Function names a model accepts: at most 64 bytes of `[A-Za-z0-9_-]`.
pub const MAX_FUNCTION_NAME_LEN: usize = 64;

/// Tool names go to models as function names: `^[a-z][a-z0-9_]*$`, at most
/// 64 bytes, and no `__` (reserved for `server__tool` names of MCP tools).
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!("`{name}` is longer than {MAX_NAME_LEN} bytes"));
    }
    let first_ok = name.starts_with(|c: char| c.is_ascii_lowercase());
    let chars_ok = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !first_ok || !chars_ok {
        return Err(format!("`{name}` is not a valid tool name"));
    }
    if name.contains("__") {
        return Err(format!(
            "`{name}` contains `__`, which is reserved for tools of MCP servers (`server__tool`)"
        ));
    }
    Ok(())
}

pub fn check_host_pattern(pattern: &str) -> Result<(), String> {
    if pattern == "*" {
        // Any host the user grants: reaches nothing until they do.
        return Ok(());
    }
    // An optional `:PORT`: that port only (else the scheme's default).
    let pattern_host = match pattern.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            if !port.parse::<u16>().is_ok_and(|p| p > 0) {
                return Err(format!(
                    "`{pattern}` has a port that is not a number from 1 to 65535"
                ));
            }
            host
        }
        _ => pattern,
    };
    let host = pattern_host.strip_prefix("*.").unwrap_or(pattern_host);
    let valid = !host.is_empty()
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    if valid {
        Ok(())
    } else {
        Err(format!(
            "`{pattern}` is not a host name, `*.domain` pattern or `host:port`"
        ))
    }
}

/// A program a tool may run: a bare name looked up on PATH (`git`), an
/// absolute path (`/usr/bin/make`), or `*` (in a manifest: whatever the user
/// grants). Never a command line: arguments are the tool's to pass.
pub fn check_program(program: &str) -> Result<(), String> {
    if program == "*" {
        return Ok(());
    }
    if program.is_empty() || program.len() > 255 {
        return Err("a program name must have 1 to 255 bytes".into());
    }
    if program
        .chars()
        .any(|c| crate::util::text::is_hidden(c) || c.is_whitespace())
    {
        return Err(format!(
            "`{}` holds spaces or control characters: a grant names one program, without arguments",
            program.escape_debug()
        ));
    }
    if program.contains('/') && !program.starts_with('/') {
        return Err(format!(
            "`{program}` is a relative path: give a name found on PATH or an absolute path"
        ));
    }
    if program.split('/').any(|part| part == "..") {
        return Err(format!("`{program}` contains `..`"));
    }
    Ok(())
}

/// Whether `name` is usable as an environment variable name.
pub fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `server__tool`, with characters models refuse in function names made `_`.
pub fn function_name(server: &str, tool: &str) -> String {
    let tool: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{server}__{tool}")
}

/// Whether `name` is a name [`function_name`] can give: `server__tool`.
pub fn is_function_name(name: &str) -> bool {
    let Some((server, tool)) = name.split_once("__") else {
        return false;
    };
    check_server_name(server).is_ok()
        && !tool.is_empty()
        && name.len() <= MAX_FUNCTION_NAME_LEN
        && tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Server names are the prefix of function names a model sees (at most 64
/// bytes in all): short names leave room for the tools' own.
const MAX_SERVER_NAME_LEN: usize = 32;

/// Server names: `^[a-z][a-z0-9_-]*$`, without `__` (the separator before
/// the tool's name) and not ending in `_`.
pub fn check_server_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_SERVER_NAME_LEN {
        return Err(format!(
            "`{name}` must be 1 to {MAX_SERVER_NAME_LEN} bytes long"
        ));
    }
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && !name.contains("__")
        && !name.ends_with('_');
    if valid {
        Ok(())
    } else {
        Err(format!("`{name}` is not a valid server name"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_names() {
        assert_eq!(function_name("fs", "read_text_file"), "fs__read_text_file");
        assert_eq!(function_name("ev", "get-sum"), "ev__get-sum");
        assert_eq!(function_name("ev", "a.b c"), "ev__a_b_c");
        assert!(is_function_name("fs__read_text_file"));
        assert!(is_function_name("ev__get-sum"));
        assert!(!is_function_name("read_file"));
        assert!(!is_function_name("fs__"));
        assert!(!is_function_name("Fs__x"));
    }
}
