//! The shared harness: a temporary workspace with its own user-data and
//! cache folders, and a way to run the `toolcell` binary in it.

use crate::fixture;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// A compile cache shared by the tests of one run, so each component is
/// compiled once (tests of the cache itself use their own).
fn shared_cache() -> &'static Path {
    static CACHE: OnceLock<tempfile::TempDir> = OnceLock::new();
    CACHE
        .get_or_init(|| tempfile::tempdir().expect("temp dir"))
        .path()
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The stdout parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }
}

/// A temporary workspace: `root` is where toolcell runs.
pub struct Workspace {
    _temp: tempfile::TempDir,
    /// The folder holding the workspace, for files "outside" it.
    pub outer: PathBuf,
    pub root: PathBuf,
    pub data: PathBuf,
    pub cache: PathBuf,
    envs: Vec<(String, String)>,
}

impl Workspace {
    pub fn new() -> Self {
        let temp = tempfile::tempdir().expect("temp dir");
        let outer = temp.path().canonicalize().expect("canonical temp dir");
        let root = outer.join("ws");
        let data = outer.join("data");
        std::fs::create_dir_all(&root).expect("workspace folder");
        Self {
            _temp: temp,
            root,
            data,
            cache: shared_cache().to_path_buf(),
            outer,
            envs: Vec::new(),
        }
    }

    /// A folder outside the workspace where the tests' own servers and
    /// programs leave marks (how often they started): made on first use,
    /// and granted to them with [`Workspace::marks_grant`].
    pub fn marks(&self) -> PathBuf {
        let marks = self.outer.join("marks");
        std::fs::create_dir_all(&marks).expect("marks folder");
        marks
    }

    /// The `write = [...]` line that lets a confined server or program
    /// leave its marks.
    pub fn marks_grant(&self) -> String {
        format!("write = [{:?}]\n", self.marks().display().to_string())
    }

    /// Uses a compile cache of its own instead of the shared one.
    pub fn with_own_cache(mut self) -> Self {
        self.cache = self.outer.join("cache");
        self
    }

    /// Sets an environment variable for every run.
    pub fn env(&mut self, key: &str, value: &str) {
        self.envs.push((key.into(), value.into()));
    }

    /// Writes `content` to `relative` inside the workspace (creating
    /// folders). A `toolcell.toml` written by a test is the user's own
    /// config: it is trusted as written (`toolcell trust`), as a user does
    /// before it may start programs; the tests of trust itself use
    /// [`Workspace::write_untrusted`].
    pub fn write(&self, relative: &str, content: &str) -> PathBuf {
        let path = self.write_untrusted(relative, content);
        if relative == "toolcell.toml" {
            // An invalid config cannot be trusted: the test is about its error.
            let _ = self
                .command(&["trust"])
                .output()
                .expect("running toolcell trust");
        }
        path
    }

    /// Writes `content` to `relative` as [`Workspace::write`] does, but a
    /// config written this way is not trusted: as one found in a cloned
    /// repository, or changed by someone else.
    pub fn write_untrusted(&self, relative: &str, content: &str) -> PathBuf {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("folders");
        std::fs::write(&path, content).expect("write");
        path
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolcell"));
        command
            .args(args)
            .current_dir(&self.root)
            .env("TOOLCELL_DATA_DIR", &self.data)
            .env("TOOLCELL_CACHE_DIR", &self.cache)
            .env_remove("TOOLCELL_LOG")
            .stdin(Stdio::null());
        for (k, v) in &self.envs {
            command.env(k, v);
        }
        command
    }

    /// Runs `toolcell ARGS` in the workspace.
    pub fn run(&self, args: &[&str]) -> Run {
        let output = self.command(args).output().expect("running toolcell");
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs `toolcell ARGS`, which must end within `limit`: a process still
    /// running then is killed, and the test fails (where one that never
    /// ends would otherwise hang it). `watch` is given its pid every 2 ms
    /// while it runs, before each look for its exit (a sample taken after
    /// the last look sees all it did). Its output is read as it comes, so
    /// a long one never fills the pipe and stops it.
    pub fn run_within(
        &self,
        args: &[&str],
        limit: std::time::Duration,
        mut watch: impl FnMut(u32),
    ) -> Run {
        let started = std::time::Instant::now();
        let mut child = self
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running toolcell");
        let pid = child.id();
        let read_all = |mut pipe: Box<dyn std::io::Read + Send>| {
            std::thread::spawn(move || {
                let mut text = Vec::new();
                pipe.read_to_end(&mut text).ok();
                String::from_utf8_lossy(&text).into_owned()
            })
        };
        let stdout = read_all(Box::new(child.stdout.take().expect("piped stdout")));
        let stderr = read_all(Box::new(child.stderr.take().expect("piped stderr")));
        let status = loop {
            watch(pid);
            if let Some(status) = child.try_wait().expect("waiting for toolcell") {
                break status;
            }
            if started.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                panic!("toolcell {args:?} still ran after {limit:?}");
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        };
        Run {
            code: status.code().unwrap_or(-1),
            stdout: stdout.join().expect("reading stdout"),
            stderr: stderr.join().expect("reading stderr"),
        }
    }

    /// `toolcell tools call NAME --args ARGS --json --yes`, which must end
    /// within `limit` ([`Workspace::run_within`]), returning the envelope.
    pub fn call_within(
        &self,
        name: &str,
        args: serde_json::Value,
        limit: std::time::Duration,
    ) -> (i32, serde_json::Value) {
        let args = args.to_string();
        let run = self.run_within(
            &["tools", "call", name, "--args", &args, "--json", "--yes"],
            limit,
            |_| {},
        );
        (run.code, run.json())
    }

    /// `toolcell tools call NAME --args ARGS --json`, returning the envelope.
    /// Large arguments go through `--args-file` (a command line holds at
    /// most 128 KiB per argument).
    pub fn call(&self, name: &str, args: serde_json::Value) -> (i32, serde_json::Value) {
        let args = args.to_string();
        let run = if args.len() > 64 * 1024 {
            let file = self.outer.join(format!("args-{}.json", std::process::id()));
            std::fs::write(&file, &args).expect("args file");
            self.run(&[
                "tools",
                "call",
                name,
                "--args-file",
                file.to_str().unwrap(),
                "--json",
                "--yes",
            ])
        } else {
            self.run(&["tools", "call", name, "--args", &args, "--json", "--yes"])
        };
        (run.code, run.json())
    }

    /// Calls a tool that must succeed; returns its result.
    pub fn call_ok(&self, name: &str, args: serde_json::Value) -> serde_json::Value {
        let (code, envelope) = self.call(name, args.clone());
        assert_eq!(code, 0, "{name} {args}: {envelope}");
        envelope["result"].clone()
    }

    /// The first call waiting in the inbox (`toolcell approvals --json`),
    /// once one is: a call is parked a moment after it starts to wait (and
    /// after a client is told it waits).
    pub fn first_parked(&self) -> serde_json::Value {
        /// Longer than any call takes to be parked, on a busy machine too.
        const PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);
        let started = std::time::Instant::now();
        loop {
            let listed = self.run(&["approvals", "--json"]);
            assert_eq!(listed.code, 0, "{listed:?}");
            if let Some(call) = listed.json().as_array().and_then(|calls| calls.first()) {
                return call.clone();
            }
            assert!(
                started.elapsed() < PATIENCE,
                "no call was parked: {listed:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Calls a tool that must fail (exit code 3); returns the error's kind
    /// and message.
    pub fn call_refused(&self, name: &str, args: serde_json::Value) -> (String, String) {
        let (code, envelope) = self.call(name, args.clone());
        assert_eq!(code, 3, "{name} {args} should fail: {envelope}");
        let text = |key: &str| {
            envelope["error"][key]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        (text("kind"), text("message"))
    }

    /// Reads a workspace file as text.
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.root.join(relative))
            .unwrap_or_else(|e| panic!("{relative}: {e}"))
    }

    /// Installs the probe test tool into this workspace.
    pub fn install_probe(&self) {
        let probe = fixture::probe();
        let manifest = probe.folder.join("tool.toml");
        let run = self.run(&[
            "tools",
            "add",
            "--yes",
            manifest.to_str().unwrap(),
            probe.wasm.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 0, "installing the probe: {run:?}");
    }
}

/// Golden files: what a test printed against what it should print.
/// `BLESS=1` rewrites the expected files instead of comparing.
pub struct Golden {
    bless: bool,
    failures: Vec<String>,
}

impl Golden {
    pub fn new() -> Self {
        Self {
            bless: std::env::var_os("BLESS").is_some(),
            failures: Vec::new(),
        }
    }

    /// Compares case `name`'s `actual` output with `expected_file`.
    pub fn check(&mut self, name: &str, expected_file: &Path, actual: &str) {
        if self.bless {
            std::fs::write(expected_file, actual).expect("writing the expected file");
            return;
        }
        let expected = std::fs::read_to_string(expected_file).unwrap_or_default();
        if expected != actual {
            self.failures.push(format!(
                "--- {name}: expected\n{expected}--- actual\n{actual}"
            ));
        }
    }

    /// Fails the test if any case differed.
    pub fn finish(self) {
        assert!(
            self.failures.is_empty(),
            "golden mismatches (rerun with BLESS=1 to accept):\n{}",
            self.failures.join("\n")
        );
    }
}
