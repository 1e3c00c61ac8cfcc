//! Secret files inside the roots: keys, tokens and credentials that sit in
//! a granted folder (`.env`, `id_rsa`, `.aws/`, …) are refused by every
//! file tool and skipped by search, unless the config opens one on purpose:
//!
//! ```toml
//! [secrets]
//! allow = ["config/test.pem", ".env.test"]   # paths or patterns, relative to a root
//! deny = ["*.secret"]                        # more patterns to refuse
//! ```
//!
//! A pattern without `/` matches a file or folder name anywhere; one with
//! `/` matches a path from the root (`*` within a name, `**` any folders).
//! A folder that matches holds only secrets (`.ssh`, `.aws`, `.gnupg`).

use crate::util::glob::{Case, matches_components, matches_name};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// Names refused wherever they are, as a desktop agent's deny list does:
/// environment files, private keys and certificates with keys, key stores,
/// and the credential files of common tools.
const DEFAULT_DENY: &[&str] = &[
    ".env",
    ".env.*",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".ssh",
    ".aws",
    ".gnupg",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".htpasswd",
    ".git-credentials",
    ".git/config",
    ".git/modules/**/config",
    ".docker/config.json",
    ".dockercfg",
    ".kube/config",
    ".config/gcloud",
    ".config/gh/hosts.yml",
    ".azure",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".vault-token",
    ".s3cfg",
    ".boto",
    "credentials.json",
    "*.tfstate",
    "*.tfstate.backup",
];

/// Files that look like secrets by name but hold examples by convention:
/// a project's `.env.example` is documentation, and models need it.
const DEFAULT_ALLOW: &[&str] = &[".env.example", ".env.sample", ".env.template", ".env.dist"];

/// Which paths inside a root are secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRules {
    deny: Vec<Pattern>,
    allow: Vec<Pattern>,
}

/// A pattern as written, and split into names once.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    text: String,
    names: Vec<String>,
}

impl Pattern {
    fn new(text: &str) -> Self {
        Self {
            text: text.to_string(),
            names: crate::util::glob::names(text),
        }
    }
}

impl Default for SecretRules {
    fn default() -> Self {
        Self::new(Vec::new(), Vec::new())
    }
}

impl SecretRules {
    /// The default rules, with the config's `allow` and `deny` added.
    pub fn new(allow: Vec<String>, deny: Vec<String>) -> Self {
        let patterns = |defaults: &[&str], more: Vec<String>| {
            defaults
                .iter()
                .map(|p| Pattern::new(p))
                .chain(more.iter().map(|p| Pattern::new(p)))
                .collect()
        };
        Self {
            deny: patterns(DEFAULT_DENY, deny),
            allow: patterns(DEFAULT_ALLOW, allow),
        }
    }

    /// The config's own `allow` patterns (beyond the examples allowed by
    /// default), if any: secret files it opens.
    pub fn opened(&self) -> Option<Vec<String>> {
        let opened: Vec<String> = self.allow[DEFAULT_ALLOW.len()..]
            .iter()
            .map(|p| p.text.clone())
            .collect();
        (!opened.is_empty()).then_some(opened)
    }

    /// These rules without the config's `allow` patterns: every secret
    /// refused again (what an untrusted config gets).
    pub fn closed(&self) -> Self {
        Self {
            deny: self.deny.clone(),
            allow: self.allow[..DEFAULT_ALLOW.len()].to_vec(),
        }
    }

    /// Why a pattern is not one: empty, absolute, or climbing out.
    pub fn check_pattern(pattern: &str) -> Result<(), String> {
        let path = Path::new(pattern);
        if pattern.trim().is_empty() {
            return Err("an empty pattern".into());
        }
        if path
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err("patterns are relative to a root, without `..`".into());
        }
        Ok(())
    }

    /// The deny pattern that makes `relative` (a path inside a root) a
    /// secret, unless an allow pattern opens it.
    pub fn secret(&self, relative: &Path) -> Option<&str> {
        self.secret_past(&names(relative), 0)
    }

    /// [`SecretRules::secret`], for many paths in few folders (a search's
    /// files): the last folder whose names no deny pattern matches, nor
    /// any folder holding it, is kept in `clear`, and of a path in it only
    /// the whole path is matched, not its folders again.
    pub fn secret_remembering(&self, relative: &Path, clear: &ClearFolder) -> Option<&str> {
        let parts = names(relative);
        // The folder's names are the path's but the last only when the
        // last is a name that is kept (UTF-8; `names` drops others).
        let folder = relative.parent();
        let last_kept = relative.file_name().is_some_and(|n| n.to_str().is_some());
        let (Some(folder), true) = (folder, last_kept) else {
            return self.secret_past(&parts, 0);
        };
        let in_folder = parts.len() - 1;
        if !clear.holds(folder) {
            if self.denied_past(&parts[..in_folder], 0).is_some() {
                return self.secret_past(&parts, 0);
            }
            clear.keep(folder);
        }
        self.secret_past(&parts, in_folder)
    }

    /// The deny pattern that makes `parts` a secret (unless an allow
    /// pattern opens it), where no deny pattern matches the first `clear`
    /// names: only longer prefixes are matched.
    fn secret_past(&self, parts: &[&str], clear: usize) -> Option<&str> {
        let denied = self.denied_past(parts, clear)?;
        let allowed = self.allow.iter().any(|p| matches_path(&p.names, parts));
        (!allowed).then_some(denied.text.as_str())
    }

    /// The first deny pattern that matches `parts` or a folder holding it,
    /// of those longer than `clear` names.
    fn denied_past(&self, parts: &[&str], clear: usize) -> Option<&Pattern> {
        self.deny
            .iter()
            .find(|p| (clear + 1..=parts.len()).any(|end| matches_path(&p.names, &parts[..end])))
    }
}

/// The last folder found to hold no secret by its path (see
/// [`SecretRules::secret_remembering`]): for one set of rules, shared by
/// the threads that judge paths for one cell.
#[derive(Debug, Default)]
pub struct ClearFolder(Mutex<Option<PathBuf>>);

impl ClearFolder {
    fn holds(&self, folder: &Path) -> bool {
        self.lock().as_deref() == Some(folder)
    }

    fn keep(&self, folder: &Path) {
        *self.lock() = Some(folder.to_path_buf());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<PathBuf>> {
        // Written whole, in one statement: usable after a panic.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SecretRules {
    /// The deny pattern whose secret lies inside the folder `relative`
    /// (`.git` for `.git/config`): moving or removing that folder would
    /// take the secret out from under its pattern.
    pub fn holds_secret(&self, relative: &Path) -> Option<&str> {
        let parts = names(relative);
        if parts.is_empty() {
            return None;
        }
        let denied = self.deny.iter().find(|p| {
            (1..p.names.len()).any(|len| {
                let prefix = &p.names[..len];
                (0..parts.len())
                    .any(|start| matches_components(prefix, &parts[start..], Case::Folded))
            })
        })?;
        let allowed = self.allow.iter().any(|p| matches_path(&p.names, &parts));
        (!allowed).then_some(denied.text.as_str())
    }
}

/// The names along `relative`.
fn names(relative: &Path) -> Vec<&str> {
    relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => part.to_str(),
            _ => None,
        })
        .collect()
}

/// Whether `pattern` matches exactly the path `parts`: a pattern without
/// `/` matches the last name; one with `/` the path's last components
/// (so `.git/config` matches `repo/.git/config`), `**` any folders.
fn matches_path(pattern: &[String], parts: &[&str]) -> bool {
    match pattern {
        [] => false,
        [name] => parts
            .last()
            .is_some_and(|last| matches_name(name, last, Case::Folded)),
        _ => {
            (0..parts.len()).any(|start| matches_components(pattern, &parts[start..], Case::Folded))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(rules: &SecretRules, path: &str) -> Option<String> {
        rules.secret(Path::new(path)).map(String::from)
    }

    #[test]
    fn remembering_a_clear_folder_judges_every_path_as_secret_does() {
        use std::os::unix::ffi::OsStrExt;
        let rules = SecretRules::new(
            vec!["config/test.pem".into()],
            vec!["build/*.secret".into(), "*.tmp".into()],
        );
        let mut paths: Vec<&Path> = [
            "src/a.rs",
            "src/.env",
            "src/b.pem",
            "config/test.pem",
            "config/x.pem",
            ".ssh/config",
            ".ssh",
            "a/.git/config",
            "a/.git/modules/m/config",
            "a/.git/HEAD",
            "build/x.secret",
            "build/sub/x.secret",
            "x.tmp",
            "x.tmp/inner",
            "docs/.env.example",
            ".config/gcloud/creds",
            "src/deeper/id_rsa.pub",
            "src/deeper/ok.txt",
            "src/./deeper//ok.txt",
            "src/deeper/..",
            "README.md",
            ".",
            "",
        ]
        .into_iter()
        .map(Path::new)
        .collect();
        // Names that are not UTF-8 (which `names` leaves out).
        for bytes in [
            &b"src/\xff.pem"[..],
            b"\xff/.env",
            b"src/\xff",
            b".ssh/\xff",
        ] {
            paths.push(Path::new(std::ffi::OsStr::from_bytes(bytes)));
        }
        // One memory through every pair, in both orders.
        let clear = ClearFolder::default();
        for first in &paths {
            for then in &paths {
                for path in [first, then] {
                    assert_eq!(
                        rules.secret_remembering(path, &clear),
                        rules.secret(path),
                        "{path:?} after {first:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_default_list_catches_keys_and_credentials() {
        let rules = SecretRules::default();
        for path in [
            ".env",
            "app/.env.local",
            ".ENV",
            "certs/server.pem",
            "home/.ssh/config",
            ".ssh",
            "id_ed25519.pub",
            ".aws/credentials",
            "repo/.git/config",
            ".netrc",
            ".config/gcloud/application_default_credentials.json",
            // A `*` in a name is a character like any other.
            "*a.pem",
            "id_rsa*x",
            "app/.env.*x",
        ] {
            assert!(secret(&rules, path).is_some(), "{path}");
        }
        for path in [
            "README.md",
            ".env.example",
            "src/env.rs",
            ".git/HEAD",
            "keys.txt",
            "docs/ssh.md",
            "environment",
        ] {
            assert_eq!(secret(&rules, path), None, "{path}");
        }
    }

    #[test]
    fn allow_opens_one_and_deny_adds_more() {
        let rules = SecretRules::new(
            vec!["fixtures/**/*.pem".into(), ".env.test".into()],
            vec!["*.secret".into()],
        );
        assert_eq!(secret(&rules, "fixtures/tls/a.pem"), None);
        assert_eq!(secret(&rules, ".env.test"), None);
        assert_eq!(secret(&rules, "other/a.pem").as_deref(), Some("*.pem"));
        assert_eq!(secret(&rules, "db.secret").as_deref(), Some("*.secret"));
        assert!(SecretRules::check_pattern("../x").is_err());
        assert!(SecretRules::check_pattern("/etc/x").is_err());
        assert!(SecretRules::check_pattern("").is_err());
    }

    #[test]
    fn folders_that_hold_a_secret_under_a_longer_pattern_are_told() {
        let rules = SecretRules::default();
        let holds = |p: &str| rules.holds_secret(Path::new(p)).map(String::from);
        assert_eq!(holds(".git").as_deref(), Some(".git/config"));
        assert_eq!(holds("repo/.git").as_deref(), Some(".git/config"));
        assert_eq!(
            holds(".git/modules/lib").as_deref(),
            Some(".git/modules/**/config")
        );
        assert_eq!(holds(".kube").as_deref(), Some(".kube/config"));
        assert_eq!(holds("src"), None);
        assert_eq!(holds(".github"), None);
        assert!(secret(&rules, ".git/modules/lib/config").is_some());
    }

    #[test]
    fn names_match_with_stars() {
        assert!(matches_name("*.pem", "a.PEM", Case::Folded));
        assert!(matches_name("id_rsa*", "id_rsa", Case::Folded));
        assert!(matches_name(".env.*", ".env.local", Case::Folded));
        assert!(!matches_name(".env.*", ".env", Case::Folded));
        assert!(!matches_name("*.key", "keys", Case::Folded));
    }
}
