//! `toolcell tools add URL#sha256=HEX`: a tool fetched from an HTTP server
//! on 127.0.0.1, installed only with the pinned hash and the user's
//! confirmation of what it asks for.

use crate::harness::Workspace;
use crate::http_server::serve;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// Fixed files over HTTP on 127.0.0.1.
struct FileServer {
    base: String,
}

impl FileServer {
    fn start(files: HashMap<String, Vec<u8>>) -> Self {
        let port = serve(|_| {
            files
                .into_iter()
                .map(|(path, body)| (path, (200, Vec::new(), body)))
                .collect()
        });
        Self {
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    fn url(&self, path: &str, bytes: &[u8]) -> String {
        format!("{}{path}#sha256={}", self.base, sha256(bytes))
    }
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The probe fixture's folder packed as `tar czf`, under a top folder.
fn packed_probe() -> Vec<u8> {
    let probe = crate::fixture::probe();
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    tar.append_path_with_name(probe.folder.join("tool.toml"), "probe/tool.toml")
        .unwrap();
    tar.append_path_with_name(&probe.wasm, "probe/probe.wasm")
        .unwrap();
    tar.into_inner().unwrap().finish().unwrap()
}

/// An archive with one entry named `name`.
fn archive_with(name: &str) -> Vec<u8> {
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let mut header = tar::Header::new_gnu();
    header.set_size(4);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    // `set_path` refuses `..`; write the raw name as an attacker would.
    header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    header.set_cksum();
    tar.append(&header, &b"evil"[..]).unwrap();
    tar.into_inner().unwrap().finish().unwrap()
}

fn installed(ws: &Workspace) -> Vec<String> {
    match std::fs::read_dir(ws.root.join(".toolcell/tools")) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn a_pinned_download_installs_and_anything_else_installs_nothing() {
    let archive = packed_probe();
    let probe = crate::fixture::probe();
    let manifest = std::fs::read(probe.folder.join("tool.toml")).unwrap();
    let wasm = std::fs::read(&probe.wasm).unwrap();
    let mut tampered = archive.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 0xff;
    let server = FileServer::start(HashMap::from([
        ("/probe.tar.gz".to_string(), archive.clone()),
        ("/tampered.tar.gz".to_string(), tampered),
        ("/tool.toml".to_string(), manifest.clone()),
        ("/probe.wasm".to_string(), wasm.clone()),
        ("/evil.tgz".to_string(), archive_with("../evil.txt")),
    ]));
    let ws = Workspace::new();

    // A tampered file: the hash of the real one does not match.
    let tampered_url = format!(
        "{}/tampered.tar.gz#sha256={}",
        server.base,
        sha256(&archive)
    );
    let run = ws.run(&["tools", "add", "--yes", &tampered_url]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("does not have the pinned hash")
            && run.stderr.contains("nothing was installed"),
        "{run:?}"
    );
    assert!(installed(&ws).is_empty(), "{:?}", installed(&ws));

    // No hash, or an archive reaching outside its folder: refused.
    let run = ws.run(&[
        "tools",
        "add",
        "--yes",
        &format!("{}/probe.tar.gz", server.base),
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("has no #sha256=HEX"), "{run:?}");
    let evil = archive_with("../evil.txt");
    let run = ws.run(&["tools", "add", "--yes", &server.url("/evil.tgz", &evil)]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("would land outside its folder"),
        "{run:?}"
    );
    assert!(installed(&ws).is_empty());

    // Plain HTTP from another machine is refused before any connection.
    let run = ws.run(&[
        "tools",
        "add",
        "--yes",
        &format!("http://tools.example/p.tgz#sha256={}", sha256(&archive)),
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("plain HTTP"), "{run:?}");

    // Without --yes and without a terminal: the capabilities are shown,
    // nothing is installed.
    let good = server.url("/probe.tar.gz", &archive);
    let run = ws.run(&["tools", "add", &good]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("`probe`")
            && run.stderr.contains("asks for:")
            && run.stderr.contains("file system:")
            && run.stderr.contains("pass --yes"),
        "{run:?}"
    );
    assert!(installed(&ws).is_empty());

    // The pinned archive, confirmed: installed and callable.
    let run = ws.run(&["tools", "add", "--yes", &good]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(installed(&ws), ["probe"]);
    let result = ws.call_ok("probe", json!({"action": "noop"}));
    assert!(!result.is_null(), "{result}");

    // The two files, each pinned.
    let other = Workspace::new();
    let run = other.run(&[
        "tools",
        "add",
        "--yes",
        &server.url("/tool.toml", &manifest),
        &server.url("/probe.wasm", &wasm),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(installed(&other), ["probe"]);
}
