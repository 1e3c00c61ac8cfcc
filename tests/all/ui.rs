//! `toolcell ui` end to end: the binary serves the page, and a real
//! headless Chromium (over the DevTools protocol) loads it, follows a run,
//! approves a parked call, undoes a run; raw HTTP requests check who is
//! refused, and why.

use crate::browser::Browser;
use crate::harness::Workspace;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// How long a test waits for a process or the page.
const PATIENCE: Duration = Duration::from_secs(60);

/// `toolcell ui` running in a workspace, stopped when dropped.
struct Page {
    child: Child,
    /// What it prints, kept open as a user's terminal would be.
    _said: BufReader<std::process::ChildStdout>,
    /// `http://127.0.0.1:PORT`
    base: String,
    token: String,
}

impl Page {
    fn start(ws: &Workspace) -> Self {
        let mut child = ws
            .command(&["ui", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut said = BufReader::new(child.stdout.take().unwrap());
        said.read_line(&mut line).unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"));
        let (base, token) = url.split_once("/?token=").unwrap();
        assert!(base.starts_with("http://127.0.0.1:"), "{url}");
        Self {
            child,
            _said: said,
            base: base.to_string(),
            token: token.to_string(),
        }
    }

    fn url(&self) -> String {
        format!("{}/?token={}", self.base, self.token)
    }

    /// One raw HTTP/1.1 request: `(status, whole answer)`.
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String) {
        let address = self.base.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        let mut text = format!(
            "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            text.push_str(&format!("Host: {address}\r\n"));
        }
        for (key, value) in headers {
            text.push_str(&format!("{key}: {value}\r\n"));
        }
        text.push_str("\r\n");
        text.push_str(body);
        stream.write_all(text.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let status = answer
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (status, answer)
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_page_answers_only_its_token_on_its_own_address_and_changes_need_the_header() {
    let ws = Workspace::new();
    let page = Page::start(&ws);
    let (status, answer) = page.request("GET", "/", &[], "");
    assert_eq!(status, 401, "{answer}");
    let (status, _) = page.request("GET", "/?token=not-the-token", &[], "");
    assert_eq!(status, 401);
    // The token in the address sets a cookie of another secret, and moves
    // to the fragment, for the page's script; always to a path of this page.
    for (asked, sent_to) in [
        (
            format!("/approvals?a=1&token={}", page.token),
            "/approvals?a=1#token=",
        ),
        (format!("//elsewhere.example/?token={}", page.token), "/"),
    ] {
        let (status, answer) = page.request("GET", &asked, &[], "");
        assert_eq!(status, 303, "{answer}");
        let location = answer
            .lines()
            .find_map(|l| l.strip_prefix("location: "))
            .unwrap();
        assert!(location.starts_with(sent_to), "{asked} → {location}");
        assert!(!location.starts_with("//"), "{asked} → {location}");
        assert!(
            location.ends_with(&format!("#token={}", page.token)),
            "{location}"
        );
    }
    let (_, answer) = page.request("GET", &format!("/?token={}", page.token), &[], "");
    assert!(answer.contains("HttpOnly; SameSite=Strict"), "{answer}");
    let cookie = answer
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_string();
    assert!(
        !cookie.contains(&page.token),
        "the cookie is not the token: {cookie}"
    );
    let (status, answer) = page.request("GET", "/", &[("Cookie", &cookie)], "");
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("script-src 'self'"), "{answer}");
    assert!(!answer.contains(&page.token), "no page holds the token");
    // A cookie of the same name planted by another page of 127.0.0.1 does
    // not lock the page out.
    let planted = format!("{}=planted; {cookie}", cookie.split('=').next().unwrap());
    let (status, _) = page.request("GET", "/", &[("Cookie", &planted)], "");
    assert_eq!(status, 200);

    // DNS rebinding: another name for this address is refused.
    let (status, _) = page.request(
        "GET",
        "/",
        &[("Host", "attacker.example"), ("Cookie", &cookie)],
        "",
    );
    assert_eq!(status, 403);
    // Another site's page may not ask, even with the cookie.
    let (status, _) = page.request(
        "GET",
        "/",
        &[("Origin", "http://attacker.example"), ("Cookie", &cookie)],
        "",
    );
    assert_eq!(status, 403);
    // A change with the cookie alone (a form, an image, or a server on
    // another port the browser sent it to) is refused.
    let json = ("Content-Type", "application/json");
    let (status, answer) = page.request(
        "POST",
        "/api/runs/1/undo",
        &[("Cookie", &cookie), json],
        "{}",
    );
    assert_eq!(status, 403, "{answer}");
    assert!(answer.contains("X-Toolcell-Token"), "{answer}");
    // With the header it reaches the action, which says what is wrong.
    let (status, answer) = page.request(
        "POST",
        "/api/runs/1/undo",
        &[("X-Toolcell-Token", &page.token), json],
        "{}",
    );
    assert_eq!(status, 404, "{answer}");
    assert!(answer.contains("there is no run 1"), "{answer}");
    // Nothing but loopback listens.
    assert!(page.base.starts_with("http://127.0.0.1:"));

    // Ctrl-C stops it, even while a page follows a run's live events.
    let mut page = page;
    let address = page.base.trim_start_matches("http://").to_string();
    let mut events = std::net::TcpStream::connect(&address).unwrap();
    write!(
        events,
        "GET /api/approvals/events HTTP/1.1\r\nHost: {address}\r\nCookie: {cookie}\r\n\r\n"
    )
    .unwrap();
    let mut head = [0u8; 12];
    events.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(page.child.id() as i32, libc::SIGINT) };
    let started = Instant::now();
    while page.child.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < PATIENCE, "Ctrl-C did not stop the page");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A workflow whose file name and answer are markup: they must show as text.
const HOSTILE: &str = r#"
tool("write_file", #{path: "<img src=x onerror=window.pwned=1>.txt", content: "one\n"});
tool("write_file", #{path: "notes.txt", content: "first\nsecond\n"});
"<script>window.pwned = 2</script> done"
"#;

/// A workflow that writes once approved.
const WAITS: &str = r#"
tool("write_file", #{path: "approved.txt", content: "yes\n"});
"written"
"#;

#[test]
fn in_a_real_browser_a_run_shows_as_cards_a_parked_call_is_approved_live_and_a_run_is_undone() {
    let ws = Workspace::new();
    ws.write("hostile.rhai", HOSTILE);
    ws.write("waits.rhai", WAITS);
    let first = ws.run(&["run", "hostile.rhai", "--yes"]);
    assert_eq!(first.code, 0, "{first:?}");
    let mut waiting = ws
        .command(&["run", "waits.rhai", "--wait-approval", "60s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let page = Page::start(&ws);
    let mut browser = Browser::start();

    // The runs, newest first, after the token became a cookie.
    browser.goto(&page.url());
    browser.wait_for("document.querySelectorAll('tr[data-run]').length === 2");
    // The token left the address for the page's own storage.
    browser.wait_for("location.hash === '' && location.search === ''");
    assert_eq!(
        browser.eval("localStorage.getItem('toolcell-token')"),
        page.token.as_str()
    );
    shot(&mut browser, "ui-runs.png");

    // The first run: its calls as cards with their diffs, markup as text.
    browser.goto(&format!("{}/runs/1", page.base));
    assert_eq!(
        browser.eval("document.querySelectorAll('article.call').length"),
        2
    );
    let card = browser.eval("document.getElementById('call-1').innerText");
    assert!(
        card.as_str()
            .unwrap()
            .contains("<img src=x onerror=window.pwned=1>.txt"),
        "{card}"
    );
    assert_eq!(
        browser.eval("document.querySelectorAll('main img, main script').length"),
        0
    );
    assert_eq!(browser.eval("typeof window.pwned"), "undefined");
    let answer = browser.eval("document.querySelector('.answer').innerText");
    assert!(
        answer
            .as_str()
            .unwrap()
            .contains("<script>window.pwned = 2</script>"),
        "{answer}"
    );
    let diff = browser.eval("document.querySelector('#call-2 .diff').innerText");
    assert!(diff.as_str().unwrap().contains("+second"), "{diff}");
    assert_eq!(
        browser.eval("document.querySelector('#call-1 .badge').innerText"),
        "done"
    );

    // The waiting run's page: its call waits for approval, and is
    // approved from the page; the run goes on, and the page follows it.
    browser.goto(&format!("{}/runs/2", page.base));
    browser.wait_for("document.querySelector('#call-1')?.dataset.state === 'waiting for approval'");
    assert!(
        browser
            .eval("document.querySelector('.parked .shown').innerText")
            .as_str()
            .unwrap()
            .contains("+yes")
    );
    // It stops the run's page as a dialog, as the terminal's prompt does;
    // put off, it stays on the page as a card.
    browser.wait_for("document.querySelector('dialog.approval')?.open === true");
    shot(&mut browser, "ui-approval.png");
    browser.eval("document.querySelector('dialog.approval button[data-close]').click()");
    assert_eq!(
        browser.eval("document.querySelector('dialog.approval').open"),
        false
    );
    assert_eq!(
        browser.eval("document.querySelector('.parked button.approve').offsetParent !== null"),
        true
    );
    browser.eval("document.querySelector('.parked button.approve').click()");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = waiting.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < PATIENCE, "the approved run did not end");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success());
    assert_eq!(ws.read("approved.txt"), "yes\n");
    // Live: the page was not reloaded, yet shows the run done.
    browser.eval("window.stayed = true");
    browser.wait_for("document.querySelector('h1 .badge').innerText === 'succeeded'");
    browser.wait_for("document.querySelector('#call-1').dataset.state === 'done'");
    assert_eq!(browser.eval("window.stayed"), true);
    let runs = ws.run(&["runs", "export", "2"]);
    assert!(runs.stdout.contains("person (toolcell ui)"), "{runs:?}");

    // Undo the first run from its page: what `toolcell undo` does.
    browser.goto(&format!("{}/runs/1", page.base));
    browser.eval("window.confirm = () => true");
    browser.eval("document.querySelector('button[data-post$=\"/undo\"]').click()");
    browser.wait_for("document.getElementById('status').className === 'ok'");
    assert!(!ws.root.join("notes.txt").exists());
    assert!(
        !ws.root
            .join("<img src=x onerror=window.pwned=1>.txt")
            .exists()
    );
    // A second undo is refused, with the reason shown as text.
    let again = browser.eval(&format!(
        "fetch('/api/runs/1/undo', {{method: 'POST', headers: {{'X-Toolcell-Token': {:?}}}}}).then(r => r.status)",
        page.token
    ));
    assert_ne!(again, 200);
    // The page's own requests without the token header are refused.
    let bare = browser.eval("fetch('/api/runs/1/undo', {method: 'POST'}).then(r => r.status)");
    assert_eq!(bare, 403);

    for (path, name) in [
        ("/schedules", "ui-schedules.png"),
        ("/tools", "ui-tools.png"),
    ] {
        browser.goto(&format!("{}{path}", page.base));
        shot(&mut browser, name);
    }
    assert!(
        browser
            .eval("document.body.innerText")
            .as_str()
            .unwrap()
            .contains("write_file")
    );
}

/// Saves a screenshot of the page into `$TOOLCELL_SCREENSHOTS`, when set
/// (the README's pictures are made this way); checks it is a PNG either way.
fn shot(browser: &mut Browser, name: &str) {
    let png = browser.screenshot();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    if let Some(dir) = std::env::var_os("TOOLCELL_SCREENSHOTS") {
        std::fs::write(std::path::Path::new(&dir).join(name), png).unwrap();
    }
}

#[test]
fn a_chat_started_from_the_page_streams_its_turn_and_waits_there_for_approval() {
    use crate::model_server::{ModelServer, Part, Reply, ollama};
    // The first turn thinks, writes, pauses (the page shows it meanwhile),
    // then asks for a write; the second answers.
    let first = Reply::stream(
        ollama::CONTENT_TYPE,
        vec![
            ollama::thinking("Planning the file."),
            ollama::content("Writing <b>it</b>."),
        ],
    )
    .then(Part::Pause(Duration::from_millis(1500)))
    .then(Part::Bytes(
        ollama::calls(&[(
            "c0",
            "write_file",
            serde_json::json!({"path": "out.txt", "content": "hi\n"}),
        )])
        .into_bytes(),
    ))
    .then(Part::Bytes(ollama::done().into_bytes()));
    let server = ModelServer::start(vec![
        first,
        ollama::answer("Done: out.txt holds hi."),
        ollama::answer("It holds <i>hi</i>."),
    ]);
    let ws = crate::agent::workspace(&server, "ollama", "");
    let page = Page::start(&ws);
    let mut browser = Browser::start();
    browser.goto(&page.url());
    browser.goto(&format!("{}/chat", page.base));
    browser.eval("document.getElementById('task').value = 'Write hi to out.txt'");
    browser.eval("document.querySelector('button[data-post=\"/api/chat\"]').click()");
    browser.wait_for("location.pathname === '/runs/1'");
    // The turn as it is written, as text.
    browser.wait_for(
        "document.querySelector('#streaming .text')?.textContent === 'Writing <b>it</b>.'",
    );
    assert_eq!(
        browser.eval("document.querySelector('#streaming .thinking').textContent"),
        "Planning the file."
    );
    assert_eq!(
        browser.eval("document.querySelectorAll('#streaming b').length"),
        0
    );
    // Its call waits on the page with the diff, and is approved there.
    browser.wait_for("document.querySelector('.parked .shown')?.innerText.includes('+hi')");
    browser.wait_for("document.querySelector('dialog.approval')?.open === true");
    shot(&mut browser, "ui-chat.png");
    browser.eval("document.querySelector('.parked button.approve').click()");
    browser.wait_for("document.querySelector('h1 .badge').innerText === 'succeeded'");
    browser.wait_for(
        "document.querySelector('.answer')?.innerText.includes('Done: out.txt holds hi.')",
    );
    assert_eq!(ws.read("out.txt"), "hi\n");
    let record = ws.run(&["runs", "export", "1"]);
    assert!(record.stdout.contains("person (toolcell ui)"), "{record:?}");
    assert!(record.stdout.contains("\"kind\":\"chat\""), "{record:?}");

    // The conversation goes on from the ended run's page, in a new run
    // that shows the earlier one as its history.
    browser.eval("document.getElementById('task').value = 'What does it hold?'");
    browser.eval("document.querySelector('button[data-post=\"/api/chat\"]').click()");
    browser.wait_for("location.pathname === '/runs/2'");
    browser.wait_for("document.querySelector('h1 .badge')?.innerText === 'succeeded'");
    browser.wait_for("document.querySelector('.answer')?.innerText === 'It holds <i>hi</i>.'");
    assert_eq!(
        browser.eval("document.querySelector('.earlier a').getAttribute('href')"),
        "/runs/1"
    );
    assert_eq!(
        browser.eval(
            "[...document.querySelectorAll('.message.carried h3')].map(h => h.textContent).join(',')"
        ),
        "user,assistant,assistant"
    );
    assert_eq!(
        browser.eval("document.querySelectorAll('.answer i').length"),
        0
    );
    shot(&mut browser, "ui-conversation.png");
    let sent = crate::agent::messages(&server.requests()[2]);
    let said: Vec<&str> = sent
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(said, ["Write hi to out.txt", "What does it hold?"]);
    // Nothing of the earlier run ran again.
    assert_eq!(
        ws.run(&["runs", "show", "2", "--json"]).json()["tool_calls"],
        serde_json::json!([])
    );
}
