//! Hardening against hostile or broken input, end to end on the binary:
//! tool files that are not files (a link to `/dev/zero`, a FIFO) or are too
//! large; tar archives whose extension records would take gigabytes of
//! memory; a model stream that never ends; a damaged run store; an MCP
//! server with 10 KB tool names.

use crate::agent::{chat, workspace};
use crate::harness::{Run, Workspace};
use crate::http_server::serve;
use crate::model_server::{ModelServer, Part, Reply, ollama, openai};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a run of the binary did, with its peak memory.
struct Measured {
    run: Run,
    peak_kib: u64,
    took: Duration,
}

/// The peak resident memory of live process `pid` so far (`VmHWM`).
fn high_water_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `toolcell ARGS` in `ws` and measures its peak resident memory;
/// fails the test if it takes longer than `limit`. The peak is sampled from
/// `/proc` while it runs: `wait4`'s `ru_maxrss` would count the memory of
/// this test process, which the child starts out sharing.
fn run_measured(ws: &Workspace, args: &[&str], limit: Duration) -> Measured {
    let started = Instant::now();
    let mut peak_kib = 0;
    let run = ws.run_within(args, limit, |pid| {
        if let Some(kib) = high_water_kib(pid) {
            peak_kib = peak_kib.max(kib);
        }
    });
    Measured {
        run,
        peak_kib,
        took: started.elapsed(),
    }
}

/// A folder holding the probe tool's manifest and, as `name`, whatever
/// `make` puts there.
fn tool_folder(ws: &Workspace, name: &str, make: impl FnOnce(&Path)) -> PathBuf {
    let folder = ws.outer.join(format!("tool-{}", name.replace('.', "-")));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(
        crate::fixture::probe().folder.join("tool.toml"),
        folder.join("tool.toml"),
    )
    .unwrap();
    make(&folder.join(name));
    folder
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

fn nothing_installed(ws: &Workspace) -> bool {
    std::fs::read_dir(ws.root.join(".toolcell/tools"))
        .map(|mut d| d.next().is_none())
        .unwrap_or(true)
}

/// Regression: `tools add` read the `.wasm` with `std::fs::read`, so a link
/// to `/dev/zero` grew without bound and a FIFO hung the command.
#[test]
fn tools_add_refuses_devices_fifos_and_oversized_components() {
    let ws = Workspace::new();
    let limit = Duration::from_secs(20);

    let zero = tool_folder(&ws, "zero.wasm", |p| {
        std::os::unix::fs::symlink("/dev/zero", p).unwrap()
    });
    let m = run_measured(
        &ws,
        &["tools", "add", "--yes", zero.to_str().unwrap()],
        limit,
    );
    assert_eq!(m.run.code, 1, "{:?}", m.run);
    assert!(
        m.run.stderr.contains(&format!(
            "{} (a link to /dev/zero) is a character device, not a regular file",
            zero.join("zero.wasm").display()
        )) && m
            .run
            .stderr
            .contains("fix: give the tool's built .wasm file itself"),
        "{:?}",
        m.run
    );
    assert!(m.peak_kib < 100 * 1024, "{} KiB", m.peak_kib);

    let fifo = tool_folder(&ws, "pipe.wasm", mkfifo);
    let m = run_measured(
        &ws,
        &["tools", "add", "--yes", fifo.to_str().unwrap()],
        limit,
    );
    assert_eq!(m.run.code, 1, "{:?}", m.run);
    assert!(
        m.run
            .stderr
            .contains("is a FIFO (named pipe), not a regular file"),
        "{:?}",
        m.run
    );

    // Sparse: 65 MiB that take no disk.
    let big = tool_folder(&ws, "big.wasm", |p| {
        std::fs::File::create(p)
            .unwrap()
            .set_len(65 * 1024 * 1024)
            .unwrap()
    });
    let m = run_measured(
        &ws,
        &["tools", "add", "--yes", big.to_str().unwrap()],
        limit,
    );
    assert_eq!(m.run.code, 1, "{:?}", m.run);
    assert!(
        m.run.stderr.contains(&format!(
            "{} is larger than 64 MiB, the most toolcell reads for a tool's component",
            big.join("big.wasm").display()
        )) && m
            .run
            .stderr
            .contains("fix: check that this is the tool's component"),
        "{:?}",
        m.run
    );

    // The two-file form, with the manifest a FIFO.
    let manifest = ws.outer.join("fifo.toml");
    mkfifo(&manifest);
    let wasm = crate::fixture::probe().wasm.to_str().unwrap();
    let m = run_measured(
        &ws,
        &["tools", "add", "--yes", manifest.to_str().unwrap(), wasm],
        limit,
    );
    assert_eq!(m.run.code, 1, "{:?}", m.run);
    assert!(
        m.run.stderr.contains(&format!(
            "invalid tool manifest: {} is a FIFO (named pipe), not a regular file",
            manifest.display()
        )),
        "{:?}",
        m.run
    );
    assert!(nothing_installed(&ws));
}

/// Regression: an installed tool's `tool.wasm` was read whole at call time,
/// whatever it had become.
#[test]
fn an_installed_component_that_became_a_device_fails_its_call_with_a_fix() {
    let ws = Workspace::new();
    ws.install_probe();
    let wasm = ws.root.join(".toolcell/tools/probe/tool.wasm");
    std::fs::remove_file(&wasm).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &wasm).unwrap();
    let m = run_measured(
        &ws,
        &[
            "tools",
            "call",
            "probe",
            "--yes",
            "--args",
            r#"{"action":"echo"}"#,
        ],
        Duration::from_secs(20),
    );
    assert_ne!(m.run.code, 0, "{:?}", m.run);
    let said = format!("{}{}", m.run.stdout, m.run.stderr);
    assert!(
        said.contains(&format!(
            "{} (a link to /dev/zero) is a character device, not a regular file",
            wasm.display()
        )) && said.contains("fix: reinstall the tool from its built .wasm"),
        "{:?}",
        m.run
    );
    assert!(m.peak_kib < 100 * 1024, "{} KiB", m.peak_kib);
}

/// One raw member of a crafted archive: its type, its name, its size as
/// its header claims it, and what writes the data after the header.
type Member<'a> = (
    tar::EntryType,
    &'a str,
    u64,
    &'a dyn Fn(&mut dyn std::io::Write),
);

/// A gzipped tar of `entries`, written header by header as an attacker
/// would (the `tar` crate's builder refuses some of it).
fn archive(entries: &[Member<'_>]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    for (kind, name, size, write) in entries {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(*kind);
        header.set_size(*size);
        header.set_mode(0o644);
        header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_cksum();
        gz.write_all(header.as_bytes()).unwrap();
        write(&mut gz);
        let pad = (512 - size % 512) % 512;
        gz.write_all(&vec![0; pad as usize]).unwrap();
    }
    gz.write_all(&[0; 1024]).unwrap();
    gz.finish().unwrap()
}

fn zeros(n: u64) -> impl Fn(&mut dyn std::io::Write) {
    move |out| {
        let block = vec![0u8; 1 << 20];
        let mut left = n;
        while left > 0 {
            let now = left.min(block.len() as u64);
            out.write_all(&block[..now as usize]).unwrap();
            left -= now;
        }
    }
}

fn bytes(data: Vec<u8>) -> impl Fn(&mut dyn std::io::Write) {
    move |out| out.write_all(&data).unwrap()
}

/// A PAX record line: `LEN key=value\n`, LEN counting itself.
fn pax_record(key: &str, value: &str) -> Vec<u8> {
    let body = format!(" {key}={value}\n");
    let mut len = body.len() + 1;
    while format!("{len}{body}").len() != len {
        len += 1;
    }
    format!("{len}{body}").into_bytes()
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Regression: the `tar` crate read PAX and GNU long-name records whole
/// into memory, so a 1 MB archive could take a gigabyte.
#[test]
fn archives_with_huge_extension_records_are_refused_in_bounded_memory() {
    const GIB: u64 = 1 << 30;
    let probe = crate::fixture::probe();
    let manifest = std::fs::read(probe.folder.join("tool.toml")).unwrap();
    let wasm = std::fs::read(&probe.wasm).unwrap();
    let long = format!("probe/{}.wasm", "w".repeat(150));

    let mut files: HashMap<String, Vec<u8>> = HashMap::new();
    // A PAX record of 1 GiB (of zeros: about 1 MB gzipped).
    files.insert(
        "/pax-bomb.tgz".into(),
        archive(&[(tar::EntryType::XHeader, "bomb", GIB, &zeros(GIB))]),
    );
    files.insert(
        "/long-name-bomb.tgz".into(),
        archive(&[(
            tar::EntryType::GNULongName,
            "././@LongLink",
            4 << 20,
            &zeros(4 << 20),
        )]),
    );
    files.insert(
        "/global-bomb.tgz".into(),
        archive(&[(
            tar::EntryType::XGlobalHeader,
            "pax_global_header",
            4 << 20,
            &zeros(4 << 20),
        )]),
    );
    // A PAX size that disagrees with the header's: two readings of one archive.
    let size_record = pax_record("size", "999");
    files.insert(
        "/pax-size.tgz".into(),
        archive(&[
            (
                tar::EntryType::XHeader,
                "x",
                size_record.len() as u64,
                &bytes(size_record.clone()),
            ),
            (
                tar::EntryType::Regular,
                "probe/tool.toml",
                4,
                &bytes(b"evil".to_vec()),
            ),
        ]),
    );
    // Well-formed records still work: a GNU long name for the component, a
    // PAX path for the manifest, and a global header as `git archive` writes.
    let path_record = pax_record("path", "probe/tool.toml");
    let comment = pax_record("comment", "0123456789abcdef");
    let mut name_record = long.clone().into_bytes();
    name_record.push(0);
    files.insert(
        "/records.tgz".into(),
        archive(&[
            (
                tar::EntryType::XGlobalHeader,
                "pax_global_header",
                comment.len() as u64,
                &bytes(comment.clone()),
            ),
            (
                tar::EntryType::XHeader,
                "x",
                path_record.len() as u64,
                &bytes(path_record.clone()),
            ),
            (
                tar::EntryType::Regular,
                "short-name",
                manifest.len() as u64,
                &bytes(manifest.clone()),
            ),
            (
                tar::EntryType::GNULongName,
                "././@LongLink",
                name_record.len() as u64,
                &bytes(name_record.clone()),
            ),
            (
                tar::EntryType::Regular,
                "truncated-name",
                wasm.len() as u64,
                &bytes(wasm.clone()),
            ),
        ]),
    );
    let pax_bomb_size = files["/pax-bomb.tgz"].len();
    assert!(pax_bomb_size < 2 << 20, "{pax_bomb_size} bytes");
    let hashes: HashMap<String, String> =
        files.iter().map(|(k, v)| (k.clone(), sha256(v))).collect();
    let port = serve(|_| {
        files
            .into_iter()
            .map(|(path, body)| (path, (200, Vec::new(), body)))
            .collect()
    });
    let url = |path: &str| format!("http://127.0.0.1:{port}{path}#sha256={}", hashes[path]);
    let limit = Duration::from_secs(60);

    for (path, record) in [
        ("/pax-bomb.tgz", "a PAX record (x) of 1073741824 bytes"),
        (
            "/long-name-bomb.tgz",
            "a GNU long name (L) of 4194304 bytes",
        ),
        (
            "/global-bomb.tgz",
            "a PAX global record (g) of 4194304 bytes",
        ),
    ] {
        let ws = Workspace::new();
        let m = run_measured(&ws, &["tools", "add", "--yes", &url(path)], limit);
        assert_eq!(m.run.code, 1, "{path}: {:?}", m.run);
        assert!(
            m.run
                .stderr
                .contains("is not a tool folder archive: it holds ")
                && m.run
                    .stderr
                    .contains(&format!("{record}, over the 64 KiB such a record may have"))
                && m.run.stderr.contains("fix: pack only the tool's folder"),
            "{path}: {:?}",
            m.run
        );
        // The download is held in memory (~1 MB); the record never is.
        assert!(
            m.peak_kib < 128 * 1024,
            "{path}: {} KiB, {:?}",
            m.peak_kib,
            m.took
        );
        assert!(nothing_installed(&ws), "{path}");
    }

    let ws = Workspace::new();
    let m = run_measured(
        &ws,
        &["tools", "add", "--yes", &url("/pax-size.tgz")],
        limit,
    );
    assert_eq!(m.run.code, 1, "{:?}", m.run);
    assert!(
        m.run
            .stderr
            .contains("a PAX record gives an entry 999 bytes, its header 4"),
        "{:?}",
        m.run
    );
    assert!(nothing_installed(&ws));

    let ws = Workspace::new();
    let m = run_measured(&ws, &["tools", "add", "--yes", &url("/records.tgz")], limit);
    assert_eq!(m.run.code, 0, "{:?}", m.run);
    assert!(
        m.run.stdout.contains("installed `probe` 0.1.0"),
        "{:?}",
        m.run
    );
}

/// A reply that sends `first`, then `again` until the client hangs up.
fn endless(content_type: &'static str, first: String, again: String) -> Reply {
    Reply {
        status: 200,
        content_type,
        parts: vec![
            Part::Bytes(first.into_bytes()),
            Part::Forever(again.into_bytes()),
        ],
    }
}

/// Regression: a model stream that never ended was read for ever (only an
/// idle stream was cut off).
#[test]
fn a_model_reply_that_never_ends_is_cut_off_at_the_cap_and_not_retried() {
    let cases = [
        (
            "ollama",
            endless(
                ollama::CONTENT_TYPE,
                ollama::content("Let me think. "),
                ollama::content("and again "),
            ),
        ),
        (
            "openai",
            endless(
                openai::CONTENT_TYPE,
                openai::content("Let me think. "),
                openai::content("and again "),
            ),
        ),
    ];
    for (provider, reply) in cases {
        let server = ModelServer::start(vec![reply]);
        let ws = workspace(&server, provider, "max_retries = 3\n");
        let started = Instant::now();
        let run = chat(&ws, &["Say something"]);
        assert_eq!(run.code, 1, "{provider}: {run:?}");
        assert!(
            run.stderr.contains(
                "the model server's reply went past 16 MiB without ending (the cap on one reply, llm::stream::MAX_REPLY_BYTES); it was cut off there and not retried"
            ) && run.stderr.contains("fix: the model (or the server) was repeating itself"),
            "{provider}: {run:?}"
        );
        assert_eq!(server.requests().len(), 1, "{provider}: retried");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{provider}: {:?}",
            started.elapsed()
        );
    }
}

/// Every chat request carries a generation cap: what the prompt leaves of
/// num_ctx, at most 16384 tokens.
#[test]
fn chat_requests_carry_num_predict_and_max_tokens_from_the_context_budget() {
    for (num_ctx, capped) in [(8192, false), (65536, true)] {
        let server = ModelServer::start(vec![ollama::answer("Hello.")]);
        let ws = workspace(&server, "ollama", "");
        let config = ws
            .read("toolcell.toml")
            .replace("num_ctx = 8192", &format!("num_ctx = {num_ctx}"));
        ws.write("toolcell.toml", &config);
        let run = chat(&ws, &["Say hello"]);
        assert_eq!(run.code, 0, "{run:?}");
        let body = &server.requests()[0].body;
        assert_eq!(body["options"]["num_ctx"], num_ctx, "{body}");
        let predict = body["options"]["num_predict"]
            .as_u64()
            .expect("num_predict");
        if capped {
            assert_eq!(predict, 16384, "{body}");
        } else {
            // The system prompt and the tool definitions take their share.
            assert!((512..8192 - 500).contains(&predict), "{predict}");
        }
    }

    let server = ModelServer::start(vec![openai::answer("Hello.")]);
    let ws = workspace(&server, "openai", "");
    let run = chat(&ws, &["Say hello"]);
    assert_eq!(run.code, 0, "{run:?}");
    let body = &server.requests()[0].body;
    let max = body["max_tokens"].as_u64().expect("max_tokens");
    assert!((512..8192 - 500).contains(&max), "{max}: {body}");
}

/// Regression: a damaged `state.db` gave "database disk image is
/// malformed", naming no file and saying nothing of what to do.
#[test]
fn a_damaged_run_store_is_named_with_what_to_do() {
    let ws = Workspace::new();
    let db = ws.root.join(".toolcell/state.db");

    // Not a database at all.
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::write(&db, "garbage, not SQLite ".repeat(500)).unwrap();
    let run = ws.run(&["runs", "list"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "error: the run store {} is damaged (file is not a database)",
            db.display()
        )),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains("fix: move it away, with the state.db-wal and state.db-shm files")
            && run
                .stderr
                .contains("toolcell then makes a new, empty store"),
        "{run:?}"
    );

    // Doing what it says works.
    let broken = ws.root.join(".toolcell/broken");
    std::fs::create_dir(&broken).unwrap();
    std::fs::rename(&db, broken.join("state.db")).unwrap();
    let run = ws.run(&["runs", "list"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(db.is_file());

    // A real store whose pages are damaged past its header.
    let mut bytes = std::fs::read(&db).unwrap();
    assert!(bytes.starts_with(b"SQLite format 3\0"));
    for (i, b) in bytes.iter_mut().enumerate().skip(100) {
        *b = (i * 7 + 13) as u8;
    }
    std::fs::write(&db, &bytes).unwrap();
    let run = ws.run(&["runs", "list"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "the run store {} is damaged (database disk image is malformed)",
            db.display()
        )) && run.stderr.contains("fix: move it away"),
        "{run:?}"
    );
}

/// Runs `toolcell ARGS`; if the workspace's programs must be trusted first
/// (`toolcell trust`), trusts them and runs again.
fn run_trusted(ws: &Workspace, args: &[&str]) -> Run {
    let run = ws.run(args);
    if run.stderr.contains("toolcell trust") {
        let trusted = ws.run(&["trust"]);
        assert_eq!(trusted.code, 0, "{trusted:?}");
        return ws.run(args);
    }
    run
}

/// Regression: a 10 KB tool name from an MCP server was printed whole in
/// every warning (twice: as given and as `server__name`).
#[test]
fn long_mcp_tool_names_and_descriptions_are_shortened() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/mcp/misbehaving.mjs"
    );
    let ws = Workspace::new();
    let starts = ws.marks().join("starts");
    ws.write(
        "toolcell.toml",
        &format!(
            "[[mcp_server]]\nname = \"long\"\ncommand = \"node\"\nargs = [{script:?}, \"long-names\", {:?}]\n{}",
            starts.to_str().unwrap(),
            ws.marks_grant()
        ),
    );
    let run = run_trusted(&ws, &["tools", "list", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains('\u{fffd}'), "cut inside a character");
    assert!(!run.stderr.contains(&"x".repeat(81)), "{}", run.stderr);
    assert!(!run.stderr.contains(&"名".repeat(81)), "{}", run.stderr);
    assert!(!run.stderr.contains(&"y".repeat(301)), "{}", run.stderr);
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: ") && l.contains("its tool"))
        .collect();
    assert_eq!(warnings.len(), 3, "{}", run.stderr);
    for line in &warnings {
        assert!(line.chars().count() < 600, "{line}");
    }
    let warned = |what: &str| warnings.iter().any(|w| w.contains(what));
    assert!(
        warned(&format!(
            "its tool `{}…` (10240 characters, 10240 bytes) would be named `long__",
            "x".repeat(80)
        )),
        "{}",
        run.stderr
    );
    assert!(
        warned(&format!(
            "its tool `{}…` (4000 characters, 12000 bytes) would be named",
            "名".repeat(80)
        )),
        "{}",
        run.stderr
    );
    assert!(
        warned("its tool `badschema` is left out: its input schema is not a usable JSON Schema"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("fix: the server names it too long for any model"),
        "{}",
        run.stderr
    );

    // The 10 KB description is kept to 2048 characters (what reaches a
    // terminal is escaped there, not here).
    let tools = run.json();
    let wordy = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "long__wordy")
        .unwrap_or_else(|| panic!("{tools}"));
    let description = wordy["description"].as_str().unwrap();
    assert_eq!(description.chars().count(), 2049, "{description}");
    assert!(
        description.starts_with("\u{1b}[31mred\u{1b}[0m word") && description.ends_with('…'),
        "{description}"
    );
}
