//! The run store in PostgreSQL (`[store] url`), on a real server started
//! for each test: the same records as SQLite for the same work, undo and
//! the inbox across processes, the config's refusals, and daemons that
//! share the schedules — each fire time run once across them, `overlap`
//! and `catch_up` held across them, and the run of a daemon killed with
//! SIGKILL marked interrupted while a survivor takes the next fire time.

use crate::harness::Workspace;
use crate::pg_server::PgServer;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// How long a test waits for daemons to get somewhere.
const PATIENCE: Duration = Duration::from_secs(60);

fn store_table(url: &str) -> String {
    format!("[store]\nurl = \"{url}\"\n")
}

/// The keys whose values differ between two runs of the same work: times.
const TIMES: &[&str] = &[
    "started_at",
    "ended_at",
    "duration_ms",
    "decided_at",
    "at",
    "asked_at",
    "expires_at",
    // A manual run's "fire time" is when it was started.
    "scheduled_at",
];

fn without_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for key in TIMES {
                map.remove(*key);
            }
            map.values_mut().for_each(without_times);
        }
        Value::Array(items) => items.iter_mut().for_each(without_times),
        _ => {}
    }
}

/// A workflow's run, its record, its undo and a parked call decided from
/// another process, in a workspace whose config starts with `store`:
/// what `runs list`, `runs show` and `runs export` said, times left out.
fn the_same_work(store: &str) -> (Workspace, Vec<Value>) {
    let ws = Workspace::new();
    ws.write("notes.md", "before\n");
    ws.write(
        "tidy.rhai",
        "tool(\"write_file\", #{path: \"notes.md\", content: \"after\\n\"});\n\
         let text = tool(\"read_file\", #{path: \"notes.md\"});\nprint(\"read it\");\n\"tidied\"\n",
    );
    ws.write(
        "park.rhai",
        "tool(\"write_file\", #{path: \"out.txt\", content: \"hello\\n\"});\n\"parked and written\"\n",
    );
    // Written after the workflows it names, so that it can be trusted.
    ws.write(
        "toolcell.toml",
        &format!(
            "{store}[[schedule]]\nname = \"nightly\"\nworkflow = \"park.rhai\"\ncron = \"0 3 * * *\"\nwait_for_approval = \"60s\"\n"
        ),
    );
    let run = ws.run(&["run", "tidy.rhai", "--approve", "write_file"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read("notes.md"), "after\n");

    let undo = ws.run(&["undo", "1"]);
    assert_eq!(undo.code, 0, "{undo:?}");
    assert_eq!(ws.read("notes.md"), "before\n");
    let again = ws.run(&["undo", "1"]);
    assert_eq!(again.code, 1, "undone twice: {again:?}");

    // A scheduled run parks its write; another process approves it.
    let parked = ws
        .command(&["schedule", "run", "nightly"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = ws.first_parked()["id"].to_string();
    let approve = ws.run(&["approve", &id]);
    assert_eq!(approve.code, 0, "{approve:?}");
    let output = parked.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(ws.read("out.txt"), "hello\n");

    let mut said = Vec::new();
    for args in [
        &["runs", "list", "--json"][..],
        &["runs", "show", "1", "--json"],
        &["runs", "show", "2", "--json"],
    ] {
        let run = ws.run(args);
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        said.push(run.json());
    }
    for run in ["1", "2"] {
        let export = ws.run(&["runs", "export", run]);
        assert_eq!(export.code, 0, "{export:?}");
        said.extend(
            export
                .stdout
                .lines()
                .map(|l| serde_json::from_str(l).unwrap()),
        );
    }
    let approvals = ws.run(&["approvals", "--history", "--json"]);
    assert_eq!(approvals.code, 0, "{approvals:?}");
    said.push(approvals.json());
    said.iter_mut().for_each(without_times);
    (ws, said)
}

#[test]
fn runs_undo_and_the_inbox_work_the_same_on_postgresql_as_on_sqlite() {
    let server = PgServer::start();
    let url = server.database("same");
    let (local, on_sqlite) = the_same_work("");
    let (shared, on_postgres) = the_same_work(&store_table(&url));
    assert_eq!(on_postgres, on_sqlite, "the same work, recorded the same");
    assert!(local.root.join(".toolcell/state.db").exists());
    assert!(
        !shared.root.join(".toolcell/state.db").exists(),
        "with [store] url nothing is kept in the workspace's SQLite"
    );
    let mut client = server.client("same");
    let count = |client: &mut postgres::Client, table: &str| -> i64 {
        client
            .query_one(&format!("SELECT COUNT(*) FROM {table}"), &[])
            .unwrap()
            .get(0)
    };
    assert_eq!(count(&mut client, "runs"), 2);
    assert_eq!(
        count(&mut client, "changes"),
        2,
        "the write of each run, kept for undo"
    );
    assert_eq!(count(&mut client, "approvals"), 1);
    let migrated: i64 = client
        .query_one("SELECT version FROM toolcell_schema", &[])
        .unwrap()
        .get(0);
    assert!(migrated >= 9, "every migration ran: {migrated}");
}

#[test]
fn a_store_url_is_checked_kept_from_untrusted_configs_and_said_when_out_of_reach() {
    let ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        "[store]\nurl = \"postgres://toolcell:hunter2@127.0.0.1/x\"\n",
    );
    let run = ws.run(&["runs", "list"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("toolcell.toml:2:")
            && run.stderr.contains("holds a password")
            && run.stderr.contains("password_env"),
        "{run:?}"
    );
    assert!(
        !run.stderr.contains("hunter2"),
        "the password is not echoed: {run:?}"
    );

    ws.write(
        "toolcell.toml",
        "[store]\nurl = \"mysql://toolcell@127.0.0.1/x\"\n",
    );
    let run = ws.run(&["runs", "list"]);
    assert!(
        run.code == 1 && run.stderr.contains("postgres://"),
        "{run:?}"
    );

    // Nothing listens on this port: said, with the store named.
    let port = crate::pg_server::free_port();
    let url = format!("postgres://toolcell@127.0.0.1:{port}/x");
    ws.write("toolcell.toml", &store_table(&url));
    let run = ws.run(&["runs", "list"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains(&format!("the run store {url}"))
            && run.stderr.contains("cannot connect"),
        "{run:?}"
    );

    // The password comes from the variable named; unset, said so.
    ws.write(
        "toolcell.toml",
        &format!(
            "{}password_env = \"TOOLCELL_TEST_STORE_PASSWORD\"\n",
            store_table(&url)
        ),
    );
    let run = ws.run(&["runs", "list"]);
    assert!(
        run.code == 1
            && run
                .stderr
                .contains("$TOOLCELL_TEST_STORE_PASSWORD, which is not set"),
        "{run:?}"
    );

    // A config found in a cloned repository does not send the runs away:
    // the workspace's own store is used, and the warning says so.
    ws.write_untrusted("toolcell.toml", &store_table(&url));
    let run = ws.run(&["runs", "list"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("runs kept in PostgreSQL at") && run.stderr.contains("own store"),
        "{run:?}"
    );
}

/// `toolcell daemon` processes of one workspace, killed when dropped.
struct Daemons(Vec<Child>);

impl Drop for Daemons {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn start_daemons(ws: &Workspace, count: usize) -> Daemons {
    Daemons(
        (0..count)
            .map(|_| {
                ws.command(&["daemon"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect(),
    )
}

/// A scheduled run as the shared store holds it.
#[derive(Debug, Clone)]
struct Row {
    id: i64,
    owner: i64,
    status: String,
    fire: i64,
}

fn rows(client: &mut postgres::Client, schedule: &str) -> Vec<Row> {
    client
        .query(
            "SELECT id, pid, status, scheduled_at FROM runs WHERE schedule = $1 ORDER BY id",
            &[&schedule],
        )
        .unwrap()
        .iter()
        .map(|r| Row {
            id: r.get(0),
            owner: r.get(1),
            status: r.get(2),
            fire: r.get(3),
        })
        .collect()
}

fn wait_rows(
    client: &mut postgres::Client,
    schedule: &str,
    done: impl Fn(&[Row]) -> bool,
) -> Vec<Row> {
    let started = Instant::now();
    loop {
        let rows = rows(client, schedule);
        if done(&rows) {
            return rows;
        }
        assert!(started.elapsed() < PATIENCE, "{schedule}: {rows:#?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The process id of the daemon whose store session is `owner` (its
/// session is named after its process).
fn process_of(client: &mut postgres::Client, owner: i64) -> u32 {
    let name: String = client
        .query_one(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
             WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.objid = $1::int8::oid",
            &[&owner],
        )
        .unwrap()
        .get(0);
    name.strip_prefix("toolcell pid ").unwrap().parse().unwrap()
}

#[test]
fn three_daemons_share_the_schedules_and_survive_one_killed() {
    let server = PgServer::start();
    let url = server.database("shared");
    let ws = Workspace::new();
    ws.write("tick.rhai", "sleep(200);\n\"ok\"\n");
    ws.write("long.rhai", "sleep(30000);\n\"done\"\n");
    ws.write(
        "toolcell.toml",
        &format!(
            "{}[[schedule]]\nname = \"tick\"\nworkflow = \"tick.rhai\"\ncron = \"* * * * * *\"\n\
             [[schedule]]\nname = \"long\"\nworkflow = \"long.rhai\"\ncron = \"* * * * * *\"\noverlap = \"skip\"\n",
            store_table(&url)
        ),
    );
    // The tables are made by the first process to open the store.
    let first = ws.run(&["runs", "list"]);
    assert_eq!(first.code, 0, "{first:?}");
    let mut daemons = start_daemons(&ws, 3);
    let mut client = server.client("shared");

    // Every fire time runs once, across the three, and more than one of
    // them does the work.
    let ticks = wait_rows(&mut client, "tick", |rows| {
        rows.iter().filter(|r| r.status == "succeeded").count() >= 8
    });
    let fires: Vec<i64> = ticks.iter().map(|r| r.fire).collect();
    let unique: BTreeSet<i64> = fires.iter().copied().collect();
    assert_eq!(
        unique.len(),
        fires.len(),
        "a fire time ran twice: {ticks:#?}"
    );
    let owners: BTreeSet<i64> = ticks.iter().map(|r| r.owner).collect();
    assert!(owners.len() >= 2, "one daemon did all the work: {ticks:#?}");

    // `overlap = "skip"` across daemons: one long run at a time, the
    // other fire times recorded as skipped, once each.
    let long = wait_rows(&mut client, "long", |rows| {
        rows.iter().filter(|r| r.status == "skipped").count() >= 3
    });
    let running: Vec<&Row> = long.iter().filter(|r| r.status == "running").collect();
    assert_eq!(running.len(), 1, "{long:#?}");
    let cut = running[0].clone();

    // Its daemon is killed mid-run: the run is marked interrupted by a
    // survivor, and a survivor takes the next fire time.
    let victim = process_of(&mut client, cut.owner);
    let index = daemons.0.iter().position(|c| c.id() == victim).unwrap();
    let mut killed = daemons.0.remove(index);
    killed.kill().unwrap();
    killed.wait().unwrap();
    let after = wait_rows(&mut client, "long", |rows| {
        rows.iter()
            .any(|r| r.id == cut.id && r.status == "interrupted")
            && rows.iter().any(|r| r.id > cut.id && r.status == "running")
    });
    let next = after
        .iter()
        .find(|r| r.id > cut.id && r.status == "running")
        .unwrap();
    assert_ne!(next.owner, cut.owner, "{after:#?}");
    assert!(next.fire > cut.fire, "{after:#?}");
    let mut per_fire: BTreeMap<i64, usize> = BTreeMap::new();
    for row in &after {
        *per_fire.entry(row.fire).or_default() += 1;
    }
    assert!(
        per_fire.values().all(|&n| n == 1),
        "each fire time handled once: {after:#?}"
    );
    let interrupted = ws.run(&["runs", "show", &cut.id.to_string(), "--json"]);
    assert_eq!(
        interrupted.json()["status"],
        "interrupted",
        "{interrupted:?}"
    );
}

#[test]
fn daemons_started_together_after_a_downtime_catch_up_once() {
    let server = PgServer::start();
    let url = server.database("catch_up");
    let ws = Workspace::new();
    ws.write("report.rhai", "sleep(500);\n\"reported\"\n");
    // Hourly, at a minute half an hour from now: its latest fire time is
    // about 30 minutes old, well past the daemon's on-time window.
    let minute = (jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .minute()
        + 30)
        % 60;
    ws.write(
        "toolcell.toml",
        &format!(
            "{}[[schedule]]\nname = \"report\"\nworkflow = \"report.rhai\"\ncron = \"{minute} * * * *\"\ntimezone = \"UTC\"\ncatch_up = \"latest\"\n",
            store_table(&url)
        ),
    );
    // The store last handled a fire time three hours ago.
    let mut client = server.client("catch_up");
    let first = ws.run(&["runs", "list"]);
    assert_eq!(first.code, 0, "{first:?}");
    let three_hours_ago = jiff::Timestamp::now().as_millisecond() - 3 * 3600 * 1000;
    client
        .execute(
            "INSERT INTO schedule_state (name, last_fire) VALUES ('report', $1)",
            &[&three_hours_ago],
        )
        .unwrap();
    let _daemons = start_daemons(&ws, 3);
    let runs = wait_rows(&mut client, "report", |rows| {
        rows.iter().any(|r| r.status == "succeeded")
    });
    // Give the other two every chance to (wrongly) run it again.
    std::thread::sleep(Duration::from_secs(3));
    let runs_now = rows(&mut client, "report");
    assert_eq!(
        runs_now.len(),
        1,
        "caught up once, not once per daemon: {runs_now:#?}"
    );
    assert_eq!(runs[0].id, runs_now[0].id);
    let shown = ws.run(&["runs", "list", "--schedule", "report", "--json"]);
    assert_eq!(shown.json()[0]["trigger"], "catch-up", "{shown:?}");
}

#[test]
fn a_daemon_that_loses_its_shared_store_stops_and_says_why() {
    let server = PgServer::start();
    let url = server.database("lost");
    let ws = Workspace::new();
    ws.write("job.rhai", "\"ok\"\n");
    ws.write(
        "toolcell.toml",
        &format!(
            "{}[[schedule]]\nname = \"yearly\"\nworkflow = \"job.rhai\"\ncron = \"0 3 1 1 *\"\n",
            store_table(&url)
        ),
    );
    let daemon = ws
        .command(&["daemon"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Up and connected: the store has its session.
    let mut client = server.client("lost");
    let started = Instant::now();
    while client
        .query_opt("SELECT 1 FROM toolcell_schema", &[])
        .is_err()
    {
        assert!(
            started.elapsed() < PATIENCE,
            "the daemon never made the tables"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(client);
    std::thread::sleep(Duration::from_millis(500));
    drop(server);
    let started = Instant::now();
    let mut daemon = daemon;
    let status = loop {
        if let Some(status) = daemon.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "the daemon ran on without its store"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(1));
    let output = daemon.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("lost the connection to the run store")
            && said.contains("start the daemon again"),
        "{said}"
    );
}

/// Makes, in `dir`, an authority (`ca.pem`) and a certificate for
/// `localhost` it signed (`server.pem`, `server.key`), with openssl.
fn make_certificates(dir: &std::path::Path) {
    let openssl = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl (Debian: openssl)");
        assert!(out.status.success(), "openssl {args:?}: {out:?}");
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=toolcell test authority",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=localhost",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("server.ext"),
        "basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
}

#[test]
fn a_store_on_another_machine_is_reached_over_tls_with_its_certificate_checked() {
    let certs = tempfile::tempdir().unwrap();
    make_certificates(certs.path());
    let server = PgServer::start_tls(crate::pg_server::ServerCert {
        cert: &certs.path().join("server.pem"),
        key: &certs.path().join("server.key"),
    });
    server.database("tls");
    let ws = Workspace::new();
    let url = format!(
        "postgres://toolcell@localhost:{}/tls?sslmode=require",
        server.port
    );
    let ca = certs.path().join("ca.pem");

    // The server takes TCP over TLS only: a list that works went over TLS,
    // the server's certificate checked against the authority given.
    ws.write(
        "toolcell.toml",
        &format!(
            "{}ca_file = {:?}\n",
            store_table(&url),
            ca.display().to_string()
        ),
    );
    let run = ws.run(&["runs", "list"]);
    assert_eq!(run.code, 0, "{run:?}");

    // Checked against the public authorities instead, the certificate is
    // refused: nothing is sent to a server that cannot prove its name.
    ws.write("toolcell.toml", &store_table(&url));
    let run = ws.run(&["runs", "list"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("cannot connect") && run.stderr.contains("certificate"),
        "{run:?}"
    );

    // Unencrypted on purpose: this server refuses it.
    let clear = format!(
        "postgres://toolcell@localhost:{}/tls?sslmode=disable",
        server.port
    );
    ws.write("toolcell.toml", &store_table(&clear));
    let run = ws.run(&["runs", "list"]);
    assert!(
        run.code == 1 && run.stderr.contains("cannot connect"),
        "{run:?}"
    );

    // Another machine, and the URL does not say how: refused at load,
    // before anything is sent.
    ws.write(
        "toolcell.toml",
        &store_table("postgres://toolcell@db.example.com:5432/toolcell"),
    );
    let run = ws.run(&["runs", "list"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("toolcell.toml:2:")
            && run.stderr.contains("in the clear")
            && run.stderr.contains("sslmode=require"),
        "{run:?}"
    );
    // Nor may a `hostaddr` send it elsewhere than the host it names.
    ws.write(
        "toolcell.toml",
        &store_table("postgres://toolcell@localhost/toolcell?hostaddr=203.0.113.7"),
    );
    let run = ws.run(&["runs", "list"]);
    assert!(
        run.code == 1 && run.stderr.contains("in the clear"),
        "{run:?}"
    );
    // A ca_file without TLS is a mistake worth saying.
    ws.write(
        "toolcell.toml",
        &format!("{}ca_file = \"ca.pem\"\n", store_table(&clear)),
    );
    let run = ws.run(&["runs", "list"]);
    assert!(
        run.code == 1 && run.stderr.contains("sslmode=require"),
        "{run:?}"
    );
}

#[test]
fn text_postgresql_cannot_hold_is_recorded_shown_not_lost() {
    let server = PgServer::start();
    let url = server.database("nul");
    let ws = Workspace::new();
    ws.write("nul.rhai", "print(\"before\\x00after\");\n\"ok\"\n");
    ws.write("toolcell.toml", &store_table(&url));
    let run = ws.run(&["run", "nul.rhai"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("cannot record"), "{run:?}");
    let shown = ws.run(&["runs", "show", "1", "--json"]);
    assert_eq!(
        shown.json()["logs"][0][1],
        "before\u{FFFD}after",
        "{shown:?}"
    );
}
