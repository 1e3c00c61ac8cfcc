//! A real PostgreSQL server for a test or a benchmark: a new cluster in a
//! temporary folder (`initdb`), its server on a free port of 127.0.0.1,
//! stopped and removed when dropped. The binaries are Debian's package
//! (`.ci/run` installs it); as root, the server runs as the `postgres`
//! user, since PostgreSQL refuses to run as root.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a new server may take to accept connections.
const START_PATIENCE: Duration = Duration::from_secs(30);

/// The role the tests sign in as (trusted: no password on 127.0.0.1).
pub const ROLE: &str = "toolcell";

pub struct PgServer {
    child: Child,
    _dir: tempfile::TempDir,
    pub port: u16,
}

/// The folder holding `initdb` and `postgres`: the newest under
/// `/usr/lib/postgresql`, else wherever `initdb` is on PATH.
fn bin_dir() -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").is_file())
        .collect();
    versions.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
    });
    if let Some(newest) = versions.pop() {
        return newest;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .find(|dir| dir.join("initdb").is_file() && dir.join("postgres").is_file())
        .expect("PostgreSQL's initdb and postgres are not installed (Debian: apt-get install postgresql; .ci/run does)")
}

/// The uid and gid to run the server as: ours, or `postgres`'s as root.
fn server_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    let line = passwd
        .lines()
        .find(|l| l.starts_with("postgres:"))
        .expect("as root, PostgreSQL runs as the `postgres` user, which Debian's package makes");
    let fields: Vec<&str> = line.split(':').collect();
    Some((fields[2].parse().unwrap(), fields[3].parse().unwrap()))
}

fn as_server_user(command: &mut Command, user: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = user {
        command.uid(uid).gid(gid);
    }
    command
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl PgServer {
    pub fn start() -> Self {
        let bin = bin_dir();
        let user = server_user();
        let dir = tempfile::tempdir().unwrap();
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).unwrap();
        }
        let data = dir.path().join("data");
        let init = as_server_user(&mut Command::new(bin.join("initdb")), user)
            .args(["--no-sync", "--auth=trust", "-E", "UTF8", "-U", ROLE, "-D"])
            .arg(&data)
            .output()
            .expect("running initdb");
        assert!(
            init.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&init.stderr)
        );
        let port = free_port();
        let child = as_server_user(&mut Command::new(bin.join("postgres")), user)
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-k"])
            .arg(dir.path())
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                // A test's server holds nothing worth a flush to disk.
                "-c",
                "fsync=off",
                "-c",
                "full_page_writes=off",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting postgres");
        let server = Self {
            child,
            _dir: dir,
            port,
        };
        let started = Instant::now();
        while server.try_client("postgres").is_err() {
            assert!(
                started.elapsed() < START_PATIENCE,
                "PostgreSQL did not accept connections on port {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// The URL of database `name`, made empty for the caller.
    pub fn database(&self, name: &str) -> String {
        let mut client = self.client("postgres");
        client
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .unwrap();
        self.url(name)
    }

    pub fn url(&self, database: &str) -> String {
        format!("postgres://{ROLE}@127.0.0.1:{}/{database}", self.port)
    }

    pub fn client(&self, database: &str) -> postgres::Client {
        self.try_client(database).unwrap()
    }

    fn try_client(&self, database: &str) -> Result<postgres::Client, postgres::Error> {
        postgres::Client::connect(&self.url(database), postgres::NoTls)
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // SIGQUIT: an immediate shutdown; the cluster is thrown away.
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGQUIT) };
        let _ = self.child.wait();
    }
}
