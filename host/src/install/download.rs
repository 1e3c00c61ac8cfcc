//! Tools fetched by URL for `toolcell tools add URL#sha256=HEX`.
//!
//! A download is accepted only if its SHA-256 is the one pinned in the
//! URL's fragment: the user states what they mean to install, and a
//! tampered or replaced file is refused before anything is unpacked.
//! HTTPS is required; plain HTTP only to this machine (a local mirror, a
//! test). The body is capped at [`MAX_DOWNLOAD_BYTES`] and read within
//! [`DOWNLOAD_TIMEOUT`]. An archive (`.tar.gz`, `.tgz`) is unpacked only as
//! plain files and folders inside the target: no links, no absolute paths,
//! no `..`; its extension records (PAX, GNU long names) are capped at
//! [`MAX_EXTENSION_BYTES`] before they are read.

use anyhow::{Context, Result, bail};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// A tool is a manifest and one component; 256 MiB is far above the
/// largest (a Python tool with its interpreter, ~40 MB) and bounds memory.
pub const MAX_DOWNLOAD_BYTES: u64 = 256 * 1024 * 1024;
/// Generous for 256 MiB on a slow line, but a stalled server ends.
pub const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(300);
/// An archive holds a handful of files; more is not a tool folder.
const MAX_ARCHIVE_ENTRIES: usize = 64;
/// Headers of any kind, extension records included: each member may bring
/// a PAX record and a GNU long name, and writers add global headers.
const MAX_ARCHIVE_HEADERS: usize = 4 * MAX_ARCHIVE_ENTRIES;
/// The largest PAX (`x`, `g`) or GNU long-name (`L`, `K`) record read: they
/// hold a path and a few `key=value` lines, and are read into memory whole,
/// so a gzip bomb in one would take gigabytes.
const MAX_EXTENSION_BYTES: u64 = 64 * 1024;

/// A URL with the hash its content must have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedUrl {
    /// The URL without its fragment.
    pub url: reqwest::Url,
    /// Lowercase hex SHA-256.
    pub sha256: String,
}

impl PinnedUrl {
    /// Whether `arg` is meant as a URL (rather than a local path).
    pub fn looks_like_url(arg: &str) -> bool {
        let lower = arg.get(..8).unwrap_or(arg).to_ascii_lowercase();
        lower.starts_with("https://") || lower.starts_with("http://")
    }

    /// Parses `URL#sha256=HEX`.
    pub fn parse(arg: &str) -> Result<Self> {
        let mut url = reqwest::Url::parse(arg).with_context(|| format!("`{arg}` is not a URL"))?;
        let fix = "fix: pin what you install: append #sha256= and the file's SHA-256 (`sha256sum FILE`), as its publisher gives it";
        let sha256 = match url.fragment().and_then(|f| f.strip_prefix("sha256=")) {
            Some(hex) if hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()) => {
                hex.to_ascii_lowercase()
            }
            Some(hex) => bail!("`{hex}` in {arg} is not a SHA-256 (64 hex digits)\n  {fix}"),
            None => bail!("{arg} has no #sha256=HEX\n  {fix}"),
        };
        url.set_fragment(None);
        match url.scheme() {
            _ if Self::secure(&url) => {}
            "http" => bail!(
                "{url} is plain HTTP: anyone on the way could change it\n  fix: use its https:// address (plain HTTP is accepted only from this machine)"
            ),
            other => {
                bail!("`{other}:` URLs cannot be installed from\n  fix: use an https:// address")
            }
        }
        Ok(Self { url, sha256 })
    }

    /// HTTPS, or plain HTTP to this machine (a local mirror, a test).
    fn secure(url: &reqwest::Url) -> bool {
        let host = url.host_str().unwrap_or_default();
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let loopback = bare == "localhost"
            || bare
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        url.scheme() == "https" || (url.scheme() == "http" && loopback)
    }

    /// The file name at the end of the URL's path, if any.
    pub fn file_name(&self) -> Option<String> {
        self.url
            .path_segments()
            .and_then(|mut s| s.next_back())
            .filter(|name| !name.is_empty())
            .map(String::from)
    }

    /// Downloads into `dir` (under the URL's file name), checking the size
    /// cap and the hash; on any failure nothing is left in `dir`.
    pub async fn fetch_into(&self, dir: &Path) -> Result<PathBuf> {
        let name = self
            .file_name()
            .filter(|n| !n.starts_with('.') && !n.contains(['/', '\\']))
            .unwrap_or_else(|| "download".into());
        // A redirect must keep to the same rules as the URL given.
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() > 5 {
                attempt.error("more than 5 redirects")
            } else if Self::secure(attempt.url()) {
                attempt.follow()
            } else {
                let to = attempt.url().to_string();
                attempt.error(format!("it redirected to plain HTTP ({to})"))
            }
        });
        let client = reqwest::Client::builder()
            .timeout(DOWNLOAD_TIMEOUT)
            .redirect(redirects)
            .build()
            .context("cannot start an HTTP client")?;
        let response = client
            .get(self.url.clone())
            .send()
            .await
            .with_context(|| format!("cannot download {}", self.url))?;
        let status = response.status();
        if !status.is_success() {
            bail!("{} answered {status}\n  fix: check the URL", self.url);
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_DOWNLOAD_BYTES)
        {
            bail!(
                "{} is over {} MiB, larger than any tool",
                self.url,
                MAX_DOWNLOAD_BYTES >> 20
            );
        }
        let mut body = Vec::new();
        let mut hasher = Sha256::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.with_context(|| format!("the download of {} broke off", self.url))?;
            if body.len() as u64 + chunk.len() as u64 > MAX_DOWNLOAD_BYTES {
                bail!(
                    "{} is over {} MiB, larger than any tool",
                    self.url,
                    MAX_DOWNLOAD_BYTES >> 20
                );
            }
            hasher.update(&chunk);
            body.extend_from_slice(&chunk);
        }
        let got = hex::encode(hasher.finalize());
        if got != self.sha256 {
            bail!(
                "{} does not have the pinned hash: its SHA-256 is {got}, not {}; nothing was installed\n  fix: if the publisher changed the file on purpose, get the new hash from them; otherwise the download was tampered with",
                self.url,
                self.sha256
            );
        }
        let path = dir.join(name);
        std::fs::write(&path, &body).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    }
}

/// Whether `path` names a gzipped tar archive.
pub fn is_archive(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    name.ends_with(".tar.gz") || name.ends_with(".tgz")
}

/// Unpacks the gzipped tar `archive` into `into` (which must be empty);
/// returns the folder holding the tool: `into` itself, or the archive's one
/// top folder.
///
/// The archive is read as raw headers, and the extension records (PAX `x`
/// and `g`, GNU long names `L` and `K`) are handled here rather than by the
/// `tar` crate, which reads each one whole into memory: here a record is
/// refused by the size its header claims, before any of it is read.
pub fn unpack(archive: &Path, into: &Path) -> Result<PathBuf> {
    let file = std::fs::File::open(archive)
        .with_context(|| format!("cannot open {}", archive.display()))?;
    let decoder = flate2::read::GzDecoder::new(file).take(MAX_DOWNLOAD_BYTES * 4);
    let mut tar = tar::Archive::new(decoder);
    let bad = |why: String| {
        anyhow::anyhow!(
            "{} is not a tool folder archive: {why}\n  fix: pack only the tool's folder (tool.toml and its .wasm): `tar czf tool.tar.gz -C my-tool .`",
            archive.display()
        )
    };
    let entries = tar
        .entries()
        .map_err(|e| bad(format!("it cannot be read ({e})")))?
        .raw(true);
    let mut headers = 0;
    let mut count = 0;
    let mut unpacked: u64 = 0;
    let mut pending = Extensions::default();
    for entry in entries {
        let mut entry = entry.map_err(|e| bad(format!("it cannot be read ({e})")))?;
        headers += 1;
        if headers > MAX_ARCHIVE_HEADERS {
            return Err(bad(format!(
                "it holds more than {MAX_ARCHIVE_HEADERS} headers"
            )));
        }
        let kind = entry.header().entry_type();
        if let Some(record) = ExtensionKind::of(kind) {
            // The header's own size field: a PAX `size` never applies to
            // an extension record, in this reader as in the `tar` crate.
            let size = entry.size();
            if size > MAX_EXTENSION_BYTES {
                return Err(bad(format!(
                    "it holds a {} of {size} bytes, over the {} KiB such a record may have",
                    record.describe(),
                    MAX_EXTENSION_BYTES >> 10
                )));
            }
            let mut data = Vec::with_capacity(size as usize);
            (&mut entry)
                .take(size)
                .read_to_end(&mut data)
                .map_err(|e| bad(format!("it cannot be read ({e})")))?;
            pending.add(record, data).map_err(bad)?;
            continue;
        }
        count += 1;
        if count > MAX_ARCHIVE_ENTRIES {
            return Err(bad(format!(
                "it holds more than {MAX_ARCHIVE_ENTRIES} entries"
            )));
        }
        let extensions = std::mem::take(&mut pending);
        let size = entry.size();
        if let Some(claimed) = extensions.size
            && claimed != size
        {
            // The `tar` crate and GNU tar would read `claimed` bytes: two
            // readers seeing different files in one archive is how
            // checks are slipped past, so neither reading is used.
            return Err(bad(format!(
                "a PAX record gives an entry {claimed} bytes, its header {size}"
            )));
        }
        let path = match extensions.path {
            Some(bytes) => {
                use std::os::unix::ffi::OsStrExt;
                PathBuf::from(std::ffi::OsStr::from_bytes(&bytes))
            }
            None => entry
                .path()
                .map_err(|e| bad(format!("an entry has an unreadable name ({e})")))?
                .into_owned(),
        };
        let safe = path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !safe {
            return Err(bad(format!(
                "the entry `{}` would land outside its folder",
                path.display()
            )));
        }
        let target = into.join(&path);
        match kind {
            tar::EntryType::Directory => std::fs::create_dir_all(&target)?,
            tar::EntryType::Regular => {
                unpacked = unpacked.saturating_add(size);
                if unpacked > MAX_DOWNLOAD_BYTES {
                    return Err(bad(format!(
                        "it unpacks to more than {} MiB",
                        MAX_DOWNLOAD_BYTES >> 20
                    )));
                }
                if target.exists() {
                    return Err(bad(format!("it holds `{}` twice", path.display())));
                }
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                let mut out = std::fs::File::create(&target)
                    .with_context(|| format!("cannot write {}", target.display()))?;
                // The header's size is a claim: copy no more than it.
                std::io::copy(&mut (&mut entry).take(size), &mut out)?;
            }
            other => {
                return Err(bad(format!(
                    "the entry `{}` is a {other:?}, not a plain file or folder",
                    path.display()
                )));
            }
        }
    }
    if pending.any() {
        return Err(bad(
            "it ends with a PAX record or a GNU long name for an entry that is not there".into(),
        ));
    }
    // `tar czf x.tgz my-tool/` puts everything under one folder.
    let top: Vec<PathBuf> = std::fs::read_dir(into)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    match top.as_slice() {
        [only] if only.is_dir() => Ok(only.clone()),
        _ => Ok(into.to_path_buf()),
    }
}

/// The extension records of tar, which describe the member after them (or,
/// `g`, the whole archive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExtensionKind {
    /// PAX `x`: `key=value` records for the next member.
    Pax,
    /// PAX `g`: records for every member; `git archive` writes one (a
    /// comment with the commit), which changes nothing here.
    PaxGlobal,
    /// GNU `L`: the next member's long name.
    LongName,
    /// GNU `K`: the next member's long link target (links are refused).
    LongLink,
}

impl ExtensionKind {
    fn of(kind: tar::EntryType) -> Option<Self> {
        match kind {
            tar::EntryType::XHeader => Some(Self::Pax),
            tar::EntryType::XGlobalHeader => Some(Self::PaxGlobal),
            tar::EntryType::GNULongName => Some(Self::LongName),
            tar::EntryType::GNULongLink => Some(Self::LongLink),
            _ => None,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Pax => "PAX record (x)",
            Self::PaxGlobal => "PAX global record (g)",
            Self::LongName => "GNU long name (L)",
            Self::LongLink => "GNU long link name (K)",
        }
    }
}

/// What extension records said of the next member.
#[derive(Debug, Default)]
struct Extensions {
    /// Its path: a GNU long name, else a PAX `path` (the `tar` crate's order).
    path: Option<Vec<u8>>,
    long_name: bool,
    pax: bool,
    /// A PAX `size`.
    size: Option<u64>,
}

impl Extensions {
    fn any(&self) -> bool {
        self.long_name || self.pax
    }

    fn add(&mut self, kind: ExtensionKind, mut data: Vec<u8>) -> Result<(), String> {
        match kind {
            ExtensionKind::PaxGlobal | ExtensionKind::LongLink => {}
            ExtensionKind::LongName => {
                if self.long_name {
                    return Err("two GNU long names describe one entry".into());
                }
                self.long_name = true;
                if data.last() == Some(&0) {
                    data.pop();
                }
                self.path = Some(data);
            }
            ExtensionKind::Pax => {
                if self.pax {
                    return Err("two PAX records describe one entry".into());
                }
                self.pax = true;
                for record in tar::PaxExtensions::new(&data) {
                    let record = record.map_err(|e| format!("a PAX record is unreadable ({e})"))?;
                    match record.key_bytes() {
                        b"path" if !self.long_name => {
                            self.path = Some(record.value_bytes().to_vec());
                        }
                        b"size" => {
                            let size = record
                                .value()
                                .ok()
                                .and_then(|v| v.parse().ok())
                                .ok_or("a PAX record has a size that is not a number")?;
                            self.size = Some(size);
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    #[test]
    fn urls_need_a_pinned_hash_and_https() {
        let ok =
            PinnedUrl::parse(&format!("https://example.org/t/tool.tgz#sha256={HASH}")).unwrap();
        assert_eq!(ok.url.as_str(), "https://example.org/t/tool.tgz");
        assert_eq!(ok.file_name().as_deref(), Some("tool.tgz"));
        let upper = HASH.to_ascii_uppercase();
        assert_eq!(
            PinnedUrl::parse(&format!("https://e.org/x#sha256={upper}"))
                .unwrap()
                .sha256,
            HASH
        );
        let err = |arg: &str| format!("{:#}", PinnedUrl::parse(arg).unwrap_err());
        assert!(err("https://e.org/x.tgz").contains("has no #sha256=HEX"));
        assert!(err("https://e.org/x.tgz#sha256=abc").contains("not a SHA-256"));
        assert!(err(&format!("http://e.org/x#sha256={HASH}")).contains("plain HTTP"));
        assert!(err(&format!("ftp://e.org/x#sha256={HASH}")).contains("`ftp:`"));
        assert!(PinnedUrl::parse(&format!("http://127.0.0.1:8/x#sha256={HASH}")).is_ok());
        assert!(PinnedUrl::parse(&format!("http://localhost/x#sha256={HASH}")).is_ok());
    }
}
