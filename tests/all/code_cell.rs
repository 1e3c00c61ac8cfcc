//! `run_python` and `run_js`: installed with the one command the README
//! gives (a pinned componentize-py or ComponentizeJS builds
//! `tools-code/TOOL`), offered only once the
//! config enables it, doing the data tasks models use code for on real
//! files, and containing code that tries to get out: each attempt ends with
//! a clear error, nothing outside the roots is touched, and the next call
//! works.

use crate::agent::{chat_on_terminal, workspace};
use crate::harness::Workspace;
use crate::model_server::{ModelServer, ollama};
use crate::polyglot;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The folder `tools-code/TOOL/install.sh` installed `tool` into
/// (`tool.toml` and `tool.wasm`), built once per test run.
fn installed(tool: &str) -> PathBuf {
    static INSTALLED: OnceLock<(Workspace, PathBuf)> = OnceLock::new();
    static INSTALLED_JS: OnceLock<(Workspace, PathBuf)> = OnceLock::new();
    let once = if tool == "run_js" {
        &INSTALLED_JS
    } else {
        &INSTALLED
    };
    once.get_or_init(|| {
        let ws = Workspace::new();
        let script = format!(
            "{}/../tools-code/{tool}/install.sh",
            env!("CARGO_MANIFEST_DIR")
        );
        let toolchains = polyglot::toolchains();
        let output = Command::new("bash")
            .arg(script)
            .current_dir(&ws.root)
            .env("COMPONENTIZE_PY", &toolchains.componentize_py)
            .env("COMPONENTIZE_JS_NODE_MODULES", &toolchains.js_node_modules)
            .env("TOOLCELL", env!("CARGO_BIN_EXE_toolcell"))
            .env("TOOLCELL_DATA_DIR", &ws.data)
            .env("TOOLCELL_CACHE_DIR", &ws.cache)
            .output()
            .expect("running install.sh");
        let said = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "install.sh of {tool} failed: {said}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(said.contains(&format!("installed `{tool}`")), "{said}");
        let folder = ws.root.join(".toolcell/tools").join(tool);
        (ws, folder)
    })
    .1
    .clone()
}

/// A workspace with `tool` installed and `config` as its config.
fn workspace_with(tool: &str, config: &str) -> Workspace {
    let ws = Workspace::new();
    install_into(&ws, tool);
    if !config.is_empty() {
        ws.write("toolcell.toml", config);
    }
    ws
}

/// Copies the installed `tool` into `ws`.
fn install_into(ws: &Workspace, tool: &str) {
    let tools = ws.root.join(".toolcell/tools").join(tool);
    std::fs::create_dir_all(&tools).unwrap();
    for file in ["tool.toml", "tool.wasm"] {
        std::fs::copy(installed(tool).join(file), tools.join(file)).unwrap();
    }
}

/// A workspace with `run_python` installed and `config` as its config.
fn workspace_with_run_python(config: &str) -> Workspace {
    workspace_with("run_python", config)
}

/// Runs `code` (with `extra` arguments); the tool's result.
fn run(ws: &Workspace, code: &str, extra: Value) -> Value {
    run_in(ws, "run_python", code, extra)
}

/// Runs `code` with `tool` (with `extra` arguments); the tool's result.
fn run_in(ws: &Workspace, tool: &str, code: &str, extra: Value) -> Value {
    let mut args = json!({ "code": code });
    args.as_object_mut()
        .unwrap()
        .extend(extra.as_object().cloned().unwrap_or_default());
    ws.call_ok(tool, args)
}

/// The error `code` ended with; it must have ended with one.
fn error_of(ws: &Workspace, code: &str) -> String {
    let result = run(ws, code, json!({}));
    result["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error from {code:?}: {result}"))
        .to_string()
}

const ENABLED: &str = "[tools.run_python]\nenabled = true\n";

#[test]
fn run_python_installs_with_one_command_is_offered_only_when_enabled_and_does_data_tasks() {
    // Installed but not enabled: neither offered nor callable.
    let ws = workspace_with_run_python("");
    let listed = ws.run(&["tools", "list", "--json"]).json();
    let entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "run_python")
        .cloned()
        .unwrap_or_else(|| panic!("run_python not listed: {listed}"));
    assert_eq!(entry["enabled"], false, "{entry}");
    let (code, envelope) = ws.call("run_python", json!({"code": "print(1)"}));
    assert_ne!(code, 0, "{envelope}");
    assert_eq!(envelope["error"]["kind"], "disabled", "{envelope}");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("[tools.run_python] enabled = true"),
        "{envelope}"
    );

    let ws = workspace_with_run_python(ENABLED);
    let mut csv = String::from("region,total\n");
    for i in 0..1000 {
        csv.push_str(&format!("r{},{}.5\n", i % 7, i));
    }
    ws.write("data/sales.csv", &csv);
    ws.write("data/a.json", r#"{"name": "a", "size": 3}"#);
    ws.write("data/b.json", r#"{"name": "b"}"#);
    ws.write("data/c.json", r#"{"name": "#);

    // Sum a column: the value of the last expression.
    let summed = run(
        &ws,
        "import csv\nwith open('data/sales.csv', newline='') as f:\n    rows = list(csv.DictReader(f))\nprint(len(rows), 'rows')\nsum(float(r['total']) for r in rows)",
        json!({}),
    );
    assert_eq!(summed["stdout"], "1000 rows\n", "{summed}");
    assert_eq!(summed["value"], "500000.0", "{summed}");
    assert_eq!(summed["error"], Value::Null, "{summed}");

    // Which JSON files fail a check, with pathlib over the root.
    let checked = run(
        &ws,
        "import json, pathlib\nbad = []\nfor p in sorted(pathlib.Path('data').glob('*.json')):\n    try:\n        doc = json.loads(p.read_text())\n    except ValueError:\n        bad.append(p.name + ': not JSON'); continue\n    if not isinstance(doc.get('size'), int):\n        bad.append(p.name + ': no size')\nbad",
        json!({}),
    );
    assert_eq!(
        checked["value"], "['b.json: no size', 'c.json: not JSON']",
        "{checked}"
    );

    // The rest of the library a data task reaches for, stdin and argv.
    let mixed = run(
        &ws,
        "import re, math, statistics, datetime, sys\nnums = [int(n) for n in re.findall(r'\\d+', sys.stdin.read())]\nprint(statistics.median(nums), math.isqrt(nums[-1]), sys.argv[1:])\ndatetime.date(2026, 12, 3) + datetime.timedelta(days=30)",
        json!({"stdin": "7 apples, 12 pears, 144 plums", "args": ["--fast"]}),
    );
    assert_eq!(mixed["stdout"], "12 12 ['--fast']\n", "{mixed}");
    assert_eq!(mixed["value"], "datetime.date(2027, 1, 2)", "{mixed}");

    // An exception: its type, message and the code's own frames.
    let failed = run(
        &ws,
        "def ratio(a, b):\n    return a / b\nprint('before')\nratio(1, 0)",
        json!({}),
    );
    let error = failed["error"].as_str().unwrap();
    assert!(
        error.contains("ZeroDivisionError: division by zero"),
        "{error}"
    );
    assert!(
        error.contains("File \"<code>\", line 2, in ratio"),
        "{error}"
    );
    assert!(!error.contains("app.py"), "the tool's own frames: {error}");
    assert_eq!(failed["stdout"], "before\n", "{failed}");
    let syntax = error_of(&ws, "print(1 +");
    assert!(syntax.contains("SyntaxError"), "{syntax}");

    // A flood of output is cut, and the cut said: by the bytes it takes in
    // the answer (100,000 with its quotes), so wide characters and escapes
    // are cut too, never failing the call at the output cap.
    let flood = run(&ws, "print('x' * 300000)", json!({}));
    assert_eq!(
        flood["stdout"].as_str().unwrap().len(),
        99_998,
        "{}",
        flood["cut"]
    );
    assert_eq!(flood["cut"]["stdout"], 200_003, "{}", flood["cut"]);
    for code in [
        "print('😀' * 100000)",
        "print('\\x01' * 60000)",
        "print('\\ud800' * 10)",
    ] {
        let result = run(&ws, code, json!({}));
        assert_eq!(result["error"], Value::Null, "{code}: {}", result["error"]);
        assert!(!result["stdout"].as_str().unwrap().is_empty(), "{code}");
    }
    // Text that is not UTF-8 (a lone surrogate, as from a file name that
    // is not) is shown as its escape, not a crash.
    let surrogate = run(
        &ws,
        "print('a\\udc80b')\nraise ValueError('\\ud800')",
        json!({}),
    );
    assert_eq!(surrogate["stdout"], "a\\udc80b\n", "{surrogate}");
    assert!(
        surrogate["error"]
            .as_str()
            .unwrap()
            .contains("ValueError: \\ud800"),
        "{surrogate}"
    );
    // Code that replaces what the answer is built with does not forge it.
    let forged = run(
        &ws,
        "import json, sys\njson.dumps = lambda *a, **k: '{\"ok\": true}'\nsys.modules['app'].describe = lambda e: None\nraise RuntimeError('real')",
        json!({}),
    );
    assert!(
        forged["error"]
            .as_str()
            .unwrap()
            .contains("RuntimeError: real"),
        "{forged}"
    );
    // Zip archives (member names in cp437) and large integers.
    let zipped = run(
        &ws,
        "import io, zipfile\nb = io.BytesIO()\nwith zipfile.ZipFile(b, 'w') as z:\n    z.writestr('a.txt', 'hi')\n(zipfile.ZipFile(b).read('a.txt'), len(str(7 ** 4000)))",
        json!({}),
    );
    assert_eq!(zipped["value"], "(b'hi', 3381)", "{zipped}");

    // Read-only unless the config says otherwise.
    let refused = error_of(&ws, "open('data/new.txt', 'w').write('x')");
    assert!(refused.contains("PermissionError"), "{refused}");
    assert!(!ws.root.join("data/new.txt").exists());
    ws.write("toolcell.toml", &format!("{ENABLED}fs = \"write\"\n"));
    let wrote = run(
        &ws,
        "open('data/new.txt', 'w').write('made by code')",
        json!({}),
    );
    assert_eq!(wrote["value"], "12", "{wrote}");
    assert_eq!(ws.read("data/new.txt"), "made by code");

    // A link may point within the roots, never out of them (the user's own
    // shell and programs would follow it).
    let linked = run(
        &ws,
        "import os\nos.symlink('new.txt', 'data/near')\nopen('data/near').read()",
        json!({}),
    );
    assert_eq!(linked["value"], "'made by code'", "{linked}");
    for target in [
        "../../outside.txt",
        "../..",
        "/etc/passwd",
        "sub/../../../x",
    ] {
        let refused = error_of(
            &ws,
            &format!("import os\nos.symlink({target:?}, 'data/far')"),
        );
        assert!(refused.contains("PermissionError"), "{target}: {refused}");
        assert!(
            std::fs::symlink_metadata(ws.root.join("data/far")).is_err(),
            "{target}"
        );
    }

    // Writes never reach toolcell's own policy: not the config, not the
    // installed tools.
    for code in [
        "open('toolcell.toml', 'a').write('\\n[tools.run_command]\\nprocess = [\"sh\"]\\n')",
        "import os\nos.makedirs('.toolcell/tools/evil', exist_ok=True)\nopen('.toolcell/tools/evil/tool.toml', 'w').write('x')",
    ] {
        let (exit, envelope) = ws.call("run_python", json!({ "code": code }));
        assert_ne!(exit, 0, "{code}: {envelope}");
        assert!(
            envelope
                .to_string()
                .contains("no tool changes toolcell's own policy"),
            "{code}: {envelope}"
        );
    }
    assert!(!ws.read("toolcell.toml").contains("run_command"));
    assert!(!ws.root.join(".toolcell/tools/evil").exists());
}

#[test]
fn run_python_code_that_tries_to_get_out_ends_with_a_clear_error_and_touches_nothing_outside() {
    let mut ws =
        workspace_with_run_python(&format!("{ENABLED}timeout_ms = 3000\nmemory_mb = 128\n"));
    ws.env("TOOLCELL_TEST_SECRET", "s3cr3t-value");
    std::fs::write(ws.outer.join("outside.txt"), "outside secret").unwrap();
    let still_works = |ws: &Workspace| {
        assert_eq!(run(ws, "print(6 * 7)", json!({}))["stdout"], "42\n");
    };

    // An endless loop is stopped at the deadline.
    let (kind, message) = ws.call_refused("run_python", json!({"code": "while True:\n    pass"}));
    assert!(message.contains("time limit"), "{kind}: {message}");
    still_works(&ws);

    // Memory: past the cap the interpreter says so (or the cell is
    // stopped); either way an error, and the next call is fresh.
    for bomb in [
        "x = bytearray(1 << 30)",
        "x = []\nwhile True:\n    x.append(bytearray(1 << 20))",
    ] {
        let (code, envelope) = ws.call("run_python", json!({ "code": bomb }));
        let text = envelope.to_string();
        assert!(
            (code == 0 && text.contains("MemoryError")) || code == 3,
            "{bomb}: {envelope}"
        );
        still_works(&ws);
    }

    // No programs, no network: said as the cell's limits.
    for (code, says) in [
        ("import os\nos.fork()", "fork"),
        ("import os\nos.system('touch ../made-by-system')", "system"),
        ("import subprocess\nsubprocess.run(['ls'])", "subprocess"),
        (
            "import socket\nsocket.create_connection(('127.0.0.1', 22))",
            "socket",
        ),
    ] {
        let error = error_of(&ws, code);
        assert!(error.contains(says), "{code}: {error}");
        assert!(error.contains("runs in a sandbox"), "{code}: {error}");
        still_works(&ws);
    }

    // Files outside the roots, by any path, cannot be read or written.
    for code in [
        "open('/etc/passwd').read()",
        "open('../outside.txt').read()",
        "open('data/../../outside.txt').read()",
        "open('../outside.txt', 'w').write('changed')",
        "open('../new-outside.txt', 'w').write('x')",
    ] {
        let result = run(&ws, code, json!({}));
        let text = result.to_string();
        assert!(result["error"].is_string(), "{code}: {result}");
        assert!(!text.contains("root:"), "{code}: {result}");
        assert!(!text.contains("outside secret"), "{code}: {result}");
    }
    // `/` is the workspace's first root, as for every tool.
    let top = run(&ws, "import os\nsorted(os.listdir('/'))", json!({}));
    assert_eq!(top["value"], "['.toolcell', 'toolcell.toml']", "{top}");
    assert_eq!(
        std::fs::read_to_string(ws.outer.join("outside.txt")).unwrap(),
        "outside secret"
    );
    assert!(!ws.outer.join("new-outside.txt").exists());
    assert!(!ws.outer.join("made-by-system").exists());

    // The environment the host runs in is not the code's.
    let environment = run(&ws, "import os\ndict(os.environ)", json!({}));
    assert_eq!(environment["value"], "{}", "{environment}");
    still_works(&ws);
}

const JS_ENABLED: &str = "[tools.run_js]\nenabled = true\n";

#[test]
fn run_js_installs_with_one_command_does_data_tasks_and_contains_what_its_code_tries() {
    let ws = workspace_with("run_js", "");
    let (code, envelope) = ws.call("run_js", json!({"code": "1"}));
    assert_ne!(code, 0, "{envelope}");
    assert_eq!(envelope["error"]["kind"], "disabled", "{envelope}");

    let mut ws = workspace_with(
        "run_js",
        &format!("{JS_ENABLED}timeout_ms = 3000\nmemory_mb = 128\n"),
    );
    ws.env("TOOLCELL_TEST_SECRET", "s3cr3t-value");
    std::fs::write(ws.outer.join("outside.txt"), "outside secret").unwrap();
    ws.write(
        "data/sales.csv",
        "region,total\nnorth,10.5\nsouth,4\nnorth,1.5\n",
    );
    ws.write("data/a.json", r#"{"size": 3}"#);
    ws.write("data/b.json", r#"{"size": "#);
    let js = |code: &str| run_in(&ws, "run_js", code, json!({}));
    let still_works = |ws: &Workspace| {
        assert_eq!(
            run_in(ws, "run_js", "console.log(6 * 7)", json!({}))["stdout"],
            "42\n"
        );
    };

    // A column summed, files checked, args and stdin, the last expression.
    let summed = js(
        "const rows = readText('data/sales.csv').trim().split('\\n').slice(1).map(l => l.split(','));\nconsole.log(rows.length, 'rows');\nrows.reduce((s, r) => s + Number(r[1]), 0)",
    );
    assert_eq!(summed["stdout"], "3 rows\n", "{summed}");
    assert_eq!(summed["value"], "16", "{summed}");
    let checked = js(
        "listDir('data').filter(n => n.endsWith('.json')).filter(n => { try { JSON.parse(readText('data/' + n)); return false } catch { return true } })",
    );
    assert_eq!(checked["value"], r#"["b.json"]"#, "{checked}");
    let given = run_in(
        &ws,
        "run_js",
        "[args, stdin.toUpperCase()]",
        json!({"args": ["--fast"], "stdin": "abc"}),
    );
    assert_eq!(given["value"], r#"[["--fast"],"ABC"]"#, "{given}");

    // Errors: name, message, the code's own frames.
    let failed = js("function ratio(a) {\n  return a.b.c\n}\nratio({})");
    let error = failed["error"].as_str().unwrap();
    assert!(error.starts_with("TypeError"), "{error}");
    assert!(error.contains("at ratio (<code>:2:"), "{error}");
    assert!(!error.contains("tool.js"), "the tool's own frames: {error}");
    let syntax = js("1\n syntax error here");
    assert!(
        syntax["error"].as_str().unwrap().contains("SyntaxError"),
        "{syntax}"
    );
    assert!(
        syntax["error"].as_str().unwrap().contains("<code>:2:"),
        "{syntax}"
    );

    // A flood of output is cut by its bytes in the answer, and the cut said.
    let flood = js("console.log('x'.repeat(300000))");
    assert_eq!(
        flood["stdout"].as_str().unwrap().len(),
        99_998,
        "{}",
        flood["cut"]
    );
    assert_eq!(flood["cut"]["stdout"], 200_003, "{}", flood["cut"]);
    // Wide output is cut by its bytes; lone surrogates become U+FFFD; code
    // that replaces what the answer is built with does not break it; async
    // code is said not to be waited for.
    let wide = js("console.log('😀'.repeat(100000)); '\\ud800'");
    assert_eq!(wide["value"], "\u{fffd}", "{}", wide["value"]);
    assert!(
        wide["cut"]["stdout"].as_u64().unwrap() > 0,
        "{}",
        wide["cut"]
    );
    let forged =
        js("JSON.stringify = () => 5; Array.prototype.join = () => 'J'; throw new Error('real')");
    assert!(
        forged["error"].as_str().unwrap().starts_with("Error: real"),
        "{forged}"
    );
    let awaited = js("(async () => { await 0; console.log('late') })()");
    assert!(
        awaited["value"].as_str().unwrap().contains("does not wait"),
        "{awaited}"
    );
    let odd = js("throw new Proxy({}, { get() { throw 1 } })");
    assert!(
        odd["error"]
            .as_str()
            .unwrap()
            .contains("could not be shown"),
        "{odd}"
    );

    // An endless loop is stopped at the deadline; memory past the cap is an
    // error; the next call is fresh.
    let (kind, message) = ws.call_refused("run_js", json!({"code": "while (true) {}"}));
    assert!(message.contains("time limit"), "{kind}: {message}");
    still_works(&ws);
    let (code, envelope) = ws.call(
        "run_js",
        json!({"code": "const a = []; while (true) a.push(new Array(1e6).fill(1))"}),
    );
    assert!(
        (code == 0 && envelope.to_string().contains("out of memory")) || code == 3,
        "{envelope}"
    );
    still_works(&ws);

    // No network, no programs, no environment, nothing outside the roots.
    let fetched = js("fetch('http://127.0.0.1:1/')");
    assert!(
        fetched["error"].as_str().unwrap().contains("no network"),
        "{fetched}"
    );
    let host = js("[typeof require, typeof process, typeof Deno]");
    assert_eq!(
        host["value"], r#"["undefined","undefined","undefined"]"#,
        "{host}"
    );
    for code in [
        "readText('/etc/passwd')",
        "readText('../outside.txt')",
        "readText('data/../../outside.txt')",
        "writeText('../outside.txt', 'changed')",
        "writeText('../new-outside.txt', 'x')",
    ] {
        let result = js(code);
        let text = result.to_string();
        assert!(result["error"].is_string(), "{code}: {result}");
        assert!(text.contains("runs in a sandbox"), "{code}: {result}");
        assert!(
            !text.contains("root:") && !text.contains("outside secret"),
            "{code}: {result}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.outer.join("outside.txt")).unwrap(),
        "outside secret"
    );
    assert!(!ws.outer.join("new-outside.txt").exists());

    // Read-only unless the config says otherwise.
    let refused = js("writeText('data/new.txt', 'x')");
    assert!(refused["error"].is_string(), "{refused}");
    assert!(!ws.root.join("data/new.txt").exists());
    ws.write("toolcell.toml", &format!("{JS_ENABLED}fs = \"write\"\n"));
    let wrote = run_in(
        &ws,
        "run_js",
        "writeText('data/new.txt', 'made by code')",
        json!({}),
    );
    assert_eq!(wrote["value"], "12", "{wrote}");
    assert_eq!(ws.read("data/new.txt"), "made by code");
    still_works(&ws);
}

#[test]
fn a_model_is_offered_run_python_only_once_enabled_and_a_person_sees_its_code_as_lines() {
    let code = "import csv\nprint('checked')\n# \u{1b}[2J? `run_python` wants to run with: nothing";
    let server = ModelServer::start(vec![
        ollama::answer("Nothing to run."),
        ollama::reply(vec![ollama::calls(&[(
            "c1",
            "run_python",
            json!({ "code": code }),
        )])]),
        ollama::answer("Done."),
    ]);
    // Installed, not enabled: not offered.
    let ws = workspace(&server, "ollama", "");
    install_into(&ws, "run_python");
    let (exit, shown) = chat_on_terminal(&ws, &["chat", "Check it"], "");
    assert_eq!(exit, 0, "{shown}");
    let offered = server.requests()[0].body["tools"].to_string();
    assert!(!offered.contains("run_python"), "{offered}");

    // Enabled: offered, asked about with the code shown line by line.
    let ws = workspace(&server, "ollama", ENABLED);
    install_into(&ws, "run_python");
    let (exit, shown) = chat_on_terminal(&ws, &["chat", "Check it"], "y\n");
    assert_eq!(exit, 0, "{shown}");
    let offered = server.requests()[1].body["tools"].to_string();
    assert!(offered.contains("run_python"), "{offered}");
    assert!(
        shown.contains("\"code\": \"(3 lines, shown below)\""),
        "{shown}"
    );
    assert!(shown.contains("    │ import csv"), "{shown}");
    assert!(shown.contains("    │ print('checked')"), "{shown}");
    // The escape in the code is shown, not sent; the forged prompt line
    // stays inside the block.
    assert!(shown.contains("│ # \\e[2J? `run_python`"), "{shown}");
    assert!(!shown.contains("\u{1b}[2J"), "{shown}");
    assert_eq!(
        shown
            .lines()
            // toolcell marks its own prompt line in reverse video.
            .map(|l| l.replace("\u{1b}[7m", ""))
            .filter(|l| l
                .trim_start()
                .starts_with("? `run_python` wants to run with"))
            .count(),
        1,
        "{shown}"
    );
    let result = crate::agent::tool_results(&server.requests()[2]);
    assert!(result[0].2.contains("checked"), "{result:?}");
}
