//! A real headless Chromium driven over the DevTools protocol, through
//! `--remote-debugging-pipe`: the browser reads commands from its fd 3 and
//! writes answers and events to its fd 4, each a JSON object ending in a
//! NUL byte. One page, attached with a flat session; the tests navigate
//! it, evaluate script in it, and take screenshots.
//!
//! Chromium is Debian's `chromium` (`.ci/run` installs it). It is started
//! with a profile of its own, and every host name but 127.0.0.1 resolving
//! nowhere, so nothing leaves the machine.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// How long a command or a wait may take before the test fails.
const PATIENCE: Duration = Duration::from_secs(30);

pub struct Browser {
    child: Child,
    commands: std::fs::File,
    messages: Receiver<Value>,
    next_id: u64,
    session: String,
    _profile: tempfile::TempDir,
}

/// A pipe's (read, write) ends, closed on exec.
fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`, which we then own.
    let made = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(made, 0, "pipe2: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just created and are owned by no one else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

impl Browser {
    /// Starts Chromium headless with one blank page.
    pub fn start() -> Self {
        let program = ["chromium", "chromium-browser", "google-chrome"]
            .into_iter()
            .find(|name| {
                Command::new("sh")
                    .args(["-c", &format!("command -v {name}")])
                    .output()
                    .is_ok_and(|o| o.status.success())
            })
            .expect("the page's tests need Chromium: install Debian's `chromium` (.ci/run does)");
        let profile = tempfile::tempdir().unwrap();
        let (to_browser_read, to_browser_write) = pipe();
        let (from_browser_read, from_browser_write) = pipe();
        let (theirs_in, theirs_out) = (
            std::os::fd::AsRawFd::as_raw_fd(&to_browser_read),
            std::os::fd::AsRawFd::as_raw_fd(&from_browser_write),
        );
        let mut command = Command::new(program);
        command
            .args([
                "--headless=new",
                // As root (a CI container) Chromium's own sandbox cannot start.
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-pipe",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-default-apps",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: between fork and exec only fcntl(2) and dup2(2) run,
        // which are async-signal-safe. The pipes are first copied above the
        // low numbers (either may be 3 or 4 already), then put where
        // Chromium looks, open across exec.
        unsafe {
            command.pre_exec(move || {
                let high_in = libc::fcntl(theirs_in, libc::F_DUPFD_CLOEXEC, 10);
                let high_out = libc::fcntl(theirs_out, libc::F_DUPFD_CLOEXEC, 10);
                if high_in == -1
                    || high_out == -1
                    || libc::dup2(high_in, 3) == -1
                    || libc::dup2(high_out, 4) == -1
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("starting Chromium");
        drop(to_browser_read);
        drop(from_browser_write);
        let (sender, messages) = channel();
        let reader = std::fs::File::from(from_browser_read);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(reader);
            let mut message = Vec::new();
            loop {
                message.clear();
                match reader.read_until(0, &mut message) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                message.pop();
                if let Ok(value) = serde_json::from_slice(&message)
                    && sender.send(value).is_err()
                {
                    return;
                }
            }
        });
        let mut browser = Self {
            child,
            commands: std::fs::File::from(to_browser_write),
            messages,
            next_id: 0,
            session: String::new(),
            _profile: profile,
        };
        let targets = browser.command("Target.getTargets", json!({}));
        let page = targets["targetInfos"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "page")
            .expect("Chromium opened no page")["targetId"]
            .clone();
        let attached = browser.command(
            "Target.attachToTarget",
            json!({"targetId": page, "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        browser.command("Page.enable", json!({}));
        browser.command("Runtime.enable", json!({}));
        browser
    }

    /// Sends `method` (to the page, once attached) and returns its result.
    pub fn command(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.commands.write_all(&bytes).unwrap();
        let started = Instant::now();
        loop {
            let left = PATIENCE.saturating_sub(started.elapsed());
            let answer = self
                .messages
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("Chromium did not answer {method}"));
            if answer["id"] == id {
                assert!(
                    answer.get("error").is_none(),
                    "{method} failed: {}",
                    answer["error"]
                );
                return answer["result"].clone();
            }
        }
    }

    /// Goes to `url` and waits until the page has loaded.
    pub fn goto(&mut self, url: &str) {
        self.command("Page.navigate", json!({"url": url}));
        self.wait_for("document.readyState === 'complete' && location.protocol === 'http:'");
    }

    /// The value of `expression` in the page (awaited if a promise).
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.command(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression} threw: {}",
            result["exceptionDetails"]
        );
        result["result"]["value"].clone()
    }

    /// Waits until `condition` is true in the page.
    pub fn wait_for(&mut self, condition: &str) {
        let started = Instant::now();
        loop {
            if self.eval(&format!("!!({condition})")) == json!(true) {
                return;
            }
            assert!(
                started.elapsed() < PATIENCE,
                "the page never came to `{condition}`; it shows: {}",
                self.eval("document.body ? document.body.innerText : ''")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A PNG of the page as it is.
    pub fn screenshot(&mut self) -> Vec<u8> {
        let shot = self.command("Page.captureScreenshot", json!({"format": "png"}));
        base64_decode(shot["data"].as_str().unwrap())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64, as the protocol sends screenshots.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0;
    for c in text.bytes().filter_map(value) {
        buffer = (buffer << 6) | c;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    out
}
