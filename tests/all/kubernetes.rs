//! `toolcell schedule export kubernetes` and the image recipe: the real
//! binary exports a sample workspace with one schedule per mapping
//! (`tests/ui/kubernetes/`), its output is compared with golden files and
//! checked offline against the Kubernetes schemas by `kubernetes-validate
//! --strict`; the refusals give their messages; the Containerfile agrees
//! with what the pods expect, and is built where a container builder runs.

use crate::harness::{Golden, Workspace};
use crate::setup_script;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Kubernetes version the manifests are checked against: one that
/// kubernetes-validate's pinned release ships schemas for, where CronJob
/// `timeZone` is stable.
const KUBERNETES_VERSION: &str = "1.34.0";

/// The image every golden export names.
const IMAGE: &str = "registry.example/toolcell:test";

/// The zone of the machine, for the schedule that names none.
const MACHINE_ZONE: &str = "America/New_York";

fn cases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ui/kubernetes")
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Copies `from` into `to`, folders and all.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// The sample workspace, its config trusted as a user does before export.
fn sample() -> Workspace {
    let mut ws = Workspace::new();
    ws.env("TZ", MACHINE_ZONE);
    copy_tree(&cases().join("workspace"), &ws.root);
    let config = std::fs::read_to_string(ws.root.join("toolcell.toml")).unwrap();
    ws.write("toolcell.toml", &config);
    ws
}

/// Runs kubernetes-validate, strict and offline, on `file`.
fn validate(file: &Path) {
    let python = setup_script::run("kubernetes-validate.sh", "python3 with venv, and PyPI once")
        .value("KUBERNETES_VALIDATE_PYTHON");
    let check = Command::new(python)
        .args(["-m", "kubernetes_validate", "--strict", "--quiet"])
        .args(["--kubernetes-version", KUBERNETES_VERSION])
        .arg(file)
        .output()
        .expect("running kubernetes-validate");
    assert!(
        check.status.success(),
        "{} does not validate against Kubernetes {KUBERNETES_VERSION}:\n{}{}",
        file.display(),
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn the_sample_exports_as_the_golden_files_and_validates() {
    let ws = sample();
    let mut golden = Golden::new();
    for (case, flags) in [
        ("default", vec![]),
        (
            "named",
            vec![
                "--namespace",
                "automation",
                "--name",
                "notes",
                "--workspace-claim",
                "notes-data",
                "--secret",
                "notes-keys",
            ],
        ),
    ] {
        let mut args = vec!["schedule", "export", "kubernetes", "--image", IMAGE];
        args.extend(flags);
        let run = ws.run(&args);
        assert_eq!(run.code, 0, "{case}: {run:?}");
        let expected = cases().join(format!("{case}.yaml"));
        golden.check(case, &expected, &run.stdout);
        let file = ws.outer.join(format!("{case}.yaml"));
        std::fs::write(&file, &run.stdout).unwrap();
        validate(&file);
        // The same bytes every time, and into --out.
        let out = ws.outer.join(format!("{case}-out.yaml"));
        args.extend(["--out", out.to_str().unwrap()]);
        assert_eq!(ws.run(&args).code, 0);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), run.stdout, "{case}");
    }
    golden.finish();
}

#[test]
fn the_mappings_hold_in_the_export() {
    let ws = sample();
    let run = ws.run(&["schedule", "export", "kubernetes", "--image", IMAGE]);
    assert_eq!(run.code, 0, "{run:?}");
    let job = |name: &str| -> String {
        let start = run
            .stdout
            .find(&format!("  name: toolcell-{name}\n"))
            .unwrap_or_else(|| panic!("no CronJob for {name}"));
        let end = run.stdout[start..]
            .find("\n---\n")
            .map_or(run.stdout.len(), |e| start + e);
        run.stdout[start..end].to_string()
    };
    let report = job("nightly-report");
    for line in [
        "schedule: \"30 2 * * 1-5\"",
        "timeZone: Europe/Berlin",
        "concurrencyPolicy: Allow",
        "startingDeadlineSeconds: 604800",
        "suspend: false",
        "backoffLimit: 3",
        "activeDeadlineSeconds: 630",
        "restartPolicy: Never",
        "runAsNonRoot: true",
        "readOnlyRootFilesystem: true",
    ] {
        assert!(
            report.contains(line),
            "nightly_report lacks {line}:\n{report}"
        );
    }
    let tidy = job("tidy");
    for line in [
        "schedule: \"@daily\"",
        &format!("timeZone: {MACHINE_ZONE}"),
        "concurrencyPolicy: Forbid",
        "startingDeadlineSeconds: 60",
        "backoffLimit: 0",
        "activeDeadlineSeconds: 930",
    ] {
        assert!(tidy.contains(line), "tidy lacks {line}:\n{tidy}");
    }
    assert!(job("paused").contains("suspend: true"));
    let ask = job("ask-docs");
    assert!(ask.contains("backoffLimit: 0") && ask.contains("startingDeadlineSeconds: 356400"));
    // The granted variables by reference, never by value; HOME is the pod's.
    for variable in [
        "DOCS_TOKEN",
        "FETCH_TOKEN",
        "OPENAI_API_KEY",
        "REPORT_TITLE",
    ] {
        assert!(
            report.contains(&format!(
                "- name: {variable}\n              valueFrom:\n                secretKeyRef:\n                  name: toolcell-env\n                  key: {variable}\n"
            )),
            "{variable} is not taken from the Secret:\n{report}"
        );
    }
    assert!(!run.stdout.contains("key: HOME"));
    // The imported module rides along with the workflow that imports it.
    assert!(
        run.stdout
            .contains("mountPath: /workspace/workflows/lib/helpers.rhai")
    );
}

#[test]
fn what_a_cluster_would_run_otherwise_is_refused_with_the_reason() {
    let dir = cases().join("refusals");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 6, "refusal cases missing: {cases:?}");
    let mut golden = Golden::new();
    for case in &cases {
        let name = case.file_stem().unwrap().to_string_lossy().into_owned();
        let ws = Workspace::new();
        ws.write("workflows/a.rhai", "1\n");
        std::fs::create_dir_all(ws.outer.join("outside")).unwrap();
        std::fs::write(ws.outer.join("outside/b.rhai"), "2\n").unwrap();
        ws.write("toolcell.toml", &std::fs::read_to_string(case).unwrap());
        let run = ws.run(&["schedule", "export", "kubernetes", "--image", IMAGE]);
        assert!(
            run.stdout.is_empty(),
            "{name}: wrote manifests: {}",
            run.stdout
        );
        let actual = format!("exit {}\n{}", run.code, run.stderr)
            .replace(ws.outer.to_str().unwrap(), "$DIR");
        assert!(
            run.code != 0 && actual.contains("fix: "),
            "{name}: a refusal says what to do: {actual}"
        );
        golden.check(&name, &case.with_extension("err"), &actual);
    }
    golden.finish();
}

#[test]
fn a_config_not_trusted_here_is_not_exported_for_a_pod_to_trust() {
    let ws = Workspace::new();
    ws.write("workflows/a.rhai", "1\n");
    ws.write_untrusted(
        "toolcell.toml",
        "[tools.web_fetch]\nenv = [\"FETCH_TOKEN\"]\n\n[[schedule]]\nname = \"a\"\nworkflow = \"workflows/a.rhai\"\ncron = \"@hourly\"\ntimezone = \"UTC\"\n",
    );
    let run = ws.run(&["schedule", "export", "kubernetes"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("is not trusted here") && run.stderr.contains("FETCH_TOKEN"),
        "{}",
        run.stderr
    );
    assert_eq!(ws.run(&["trust"]).code, 0);
    let run = ws.run(&["schedule", "export", "kubernetes"]);
    assert_eq!(run.code, 0, "{run:?}");
    // Without --image: the image of this version.
    assert!(run.stdout.contains(&format!(
        "image: \"toolcell:{}\"",
        env!("CARGO_PKG_VERSION")
    )));
}

/// The number after `key: ` in `yaml`.
fn number_after(yaml: &str, key: &str) -> String {
    let at = yaml.find(key).unwrap_or_else(|| panic!("no {key}")) + key.len();
    yaml[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect()
}

#[test]
fn the_containerfile_makes_the_user_and_the_folders_the_pods_expect() {
    let ws = sample();
    let run = ws.run(&["schedule", "export", "kubernetes", "--image", IMAGE]);
    assert_eq!(run.code, 0, "{run:?}");
    let uid = number_after(&run.stdout, "runAsUser: ");
    assert_eq!(number_after(&run.stdout, "runAsGroup: "), uid);
    let recipe = std::fs::read_to_string(repository().join("Containerfile")).unwrap();
    for needed in [
        format!("--uid {uid} --gid {uid}"),
        format!("--gid {uid} toolcell"),
        format!("USER {uid}:{uid}"),
        "--home-dir /home/toolcell".into(),
        "ENV HOME=/home/toolcell".into(),
        "mkdir /workspace".into(),
        "WORKDIR /workspace".into(),
        "rustup target add wasm32-wasip2".into(),
        "ENTRYPOINT [\"/usr/local/bin/toolcell\"]".into(),
    ] {
        assert!(
            recipe.contains(&needed),
            "the Containerfile lacks `{needed}`"
        );
    }
    assert!(
        run.stdout.contains("mountPath: /workspace\n")
            && run.stdout.contains("value: /home/toolcell\n")
    );
    // The Rust image is the toolchain the workspace asks for.
    let manifest = std::fs::read_to_string(repository().join("Cargo.toml")).unwrap();
    let rust = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .expect("rust-version in Cargo.toml")
        .trim_matches('"');
    assert!(
        recipe.contains(&format!("rust:{rust}-")),
        "the build stage is not Rust {rust}"
    );
    // What it copies and what its build needs exist.
    for path in [
        "Cargo.toml",
        "Cargo.lock",
        "host/build.rs",
        "tools-wasm",
        ".dockerignore",
    ] {
        assert!(repository().join(path).exists(), "{path} is missing");
    }
}

/// The container builder on this machine whose daemon answers, if any.
fn container_builder() -> Result<&'static str, String> {
    let mut said = Vec::new();
    for builder in ["docker", "podman"] {
        match Command::new(builder).arg("info").output() {
            Ok(out) if out.status.success() => return Ok(builder),
            Ok(out) => said.push(format!(
                "`{builder} info` failed: {}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim()
            )),
            Err(e) => said.push(format!("no {builder} ({e})")),
        }
    }
    Err(said.join("; "))
}

#[test]
fn the_image_builds_and_runs_where_a_container_builder_runs() {
    let builder = match container_builder() {
        Ok(builder) => builder,
        Err(why) => {
            println!("skipped: the image is not built here: {why}");
            return;
        }
    };
    let tag = "toolcell-test:containerfile";
    let build = Command::new(builder)
        .args(["build", "-f", "Containerfile", "-t", tag, "."])
        .current_dir(repository())
        .output()
        .expect("running the build");
    assert!(
        build.status.success(),
        "{builder} build failed:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let version = Command::new(builder)
        .args(["run", "--rm", tag, "--version"])
        .output()
        .expect("running the image");
    let stdout = String::from_utf8_lossy(&version.stdout);
    assert!(
        version.status.success() && stdout.contains(env!("CARGO_PKG_VERSION")),
        "toolcell --version in the image: {stdout}{}",
        String::from_utf8_lossy(&version.stderr)
    );
    let user = Command::new(builder)
        .args(["image", "inspect", "--format", "{{.Config.User}}", tag])
        .output()
        .expect("inspecting the image");
    assert_eq!(String::from_utf8_lossy(&user.stdout).trim(), "10001:10001");
}
