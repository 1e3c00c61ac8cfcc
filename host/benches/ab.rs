//! Whole processes side by side: an A/B of two builds of toolcell (or of
//! toolcell and a native command), the commands run in turn, round after
//! round, so that the machine's drift falls on all of them alike.
//!
//! `cargo bench -p toolcell --bench ab -- ROUNDS 'OLD tools call …' 'NEW tools call …' 'cat small.txt'`
//!
//! Each command is split into words as a shell would split simple quoting
//! (single and double quotes, no expansion) and started directly, without
//! a shell, its input and output /dev/null (a command that waits for an
//! answer fails instead of hanging). For each command: the median wall
//! time (of an even count, the upper middle sample) and its first
//! quartile, and the medians of its user CPU time and minor page faults
//! (from `wait4`). The first rounds warm the page cache and are not
//! counted.

use std::process::{Command, Stdio};
use std::time::Instant;

/// Rounds run before those counted.
const WARM_UP: usize = 3;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some((rounds, commands)) = args.split_first() else {
        eprintln!("usage: cargo bench --bench ab -- ROUNDS 'COMMAND' ['COMMAND' …]");
        std::process::exit(2);
    };
    let rounds: usize = rounds.parse().expect("ROUNDS is a number");
    assert!(rounds > 0, "ROUNDS is at least 1");
    let commands: Vec<Vec<String>> = commands.iter().map(|c| words(c)).collect();
    let mut samples = vec![Vec::new(); commands.len()];
    for round in 0..WARM_UP + rounds {
        for (command, samples) in commands.iter().zip(&mut samples) {
            let sample = run(command);
            if round >= WARM_UP {
                samples.push(sample);
            }
        }
    }
    for (command, samples) in args[1..].iter().zip(samples) {
        let pick = |f: fn(&Sample) -> f64, at: f64| {
            let mut values: Vec<f64> = samples.iter().map(f).collect();
            values.sort_by(f64::total_cmp);
            values[((values.len() - 1) as f64 * at).round() as usize]
        };
        println!(
            "{:8.2} ms (q1 {:6.2})  user {:5.2} ms  faults {:5.0}  {command}",
            pick(|s| s.wall_ms, 0.5),
            pick(|s| s.wall_ms, 0.25),
            pick(|s| s.user_ms, 0.5),
            pick(|s| s.faults, 0.5),
        );
    }
}

#[derive(Clone)]
struct Sample {
    wall_ms: f64,
    user_ms: f64,
    faults: f64,
}

/// Runs `command` once and waits for it, with its usage.
// The child is reaped by `wait4`, which std's `Child` cannot see.
#[allow(clippy::zombie_processes)]
fn run(command: &[String]) -> Sample {
    let started = Instant::now();
    let child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", command[0]));
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value for `wait4` to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = loop {
        // SAFETY: `child` is this process's child, not waited for yet; the
        // pointers are to live locals.
        let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
        let interrupted = std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
        if pid != -1 || !interrupted {
            break pid;
        }
    };
    let wall_ms = started.elapsed().as_secs_f64() * 1e3;
    assert_eq!(pid, child.id() as i32, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{command:?} failed (status {status}): its output is needed to tell"
    );
    Sample {
        wall_ms,
        user_ms: usage.ru_utime.tv_sec as f64 * 1e3 + usage.ru_utime.tv_usec as f64 / 1e3,
        faults: usage.ru_minflt as f64,
    }
}

/// `line` split into words: spaces separate them, and single or double
/// quotes keep what they enclose together (without the quotes).
fn words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut in_word) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => (quote, in_word) = (Some(c), true),
            (None, ' ') => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    assert!(quote.is_none(), "an unclosed quote in {line:?}");
    if in_word {
        words.push(word);
    }
    assert!(!words.is_empty(), "an empty command");
    words
}
