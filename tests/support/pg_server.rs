//! A real PostgreSQL server for a test or a benchmark: a new cluster in a
//! temporary folder (`initdb`), its server on a free port of 127.0.0.1
//! (and a Unix socket in that folder), stopped and removed when dropped.
//! [`PgServer::start_tls`] starts one that takes TCP connections over TLS
//! only. The binaries are Debian's package
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
    dir: tempfile::TempDir,
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

/// A port nothing listens on now, on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A certificate and its key, as PEM files, for a server's TLS.
pub struct ServerCert<'a> {
    pub cert: &'a std::path::Path,
    pub key: &'a std::path::Path,
}

impl PgServer {
    pub fn start() -> Self {
        Self::start_with(None)
    }

    /// A server whose TCP connections must use TLS with `cert` (Unix
    /// socket connections, the harness's own, need none).
    pub fn start_tls(cert: ServerCert<'_>) -> Self {
        Self::start_with(Some(cert))
    }

    fn start_with(tls: Option<ServerCert<'_>>) -> Self {
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
        let mut settings = Vec::new();
        if let Some(tls) = tls {
            for (from, name) in [(tls.cert, "server.crt"), (tls.key, "server.key")] {
                let to = data.join(name);
                std::fs::copy(from, &to).unwrap();
                std::fs::set_permissions(&to, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                    .unwrap();
                if let Some((uid, gid)) = user {
                    std::os::unix::fs::chown(&to, Some(uid), Some(gid)).unwrap();
                }
            }
            // TCP over TLS only; the socket for the harness.
            std::fs::write(
                data.join("pg_hba.conf"),
                "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostssl all all ::1/128 trust\n",
            )
            .unwrap();
            settings.extend(["-c", "ssl=on"]);
        }
        let port = free_port();
        let child = as_server_user(&mut Command::new(bin.join("postgres")), user)
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-k"])
            .arg(dir.path())
            .args(&settings)
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
        let server = Self { child, dir, port };
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

    /// A client of the harness's own, through the Unix socket.
    fn try_client(&self, database: &str) -> Result<postgres::Client, postgres::Error> {
        postgres::Config::new()
            .host_path(self.dir.path())
            .port(self.port)
            .user(ROLE)
            .dbname(database)
            .connect(postgres::NoTls)
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
