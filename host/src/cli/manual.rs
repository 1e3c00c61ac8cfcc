//! `toolcell completions SHELL` and `toolcell man`: the shell's completions
//! and the manual pages, made from the command line's own definition, so
//! they never say other than what it takes.

use super::{Cli, EXIT_OK};
use anyhow::{Context, Result};
use clap::{Args, CommandFactory};
use clap_complete::Shell;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    shell: Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write toolcell.1 and a page per command (toolcell-chat.1, …) into
    /// DIR instead of printing toolcell.1.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Prints the completion script for `args.shell`.
pub fn completions(args: CompletionsArgs) -> Result<i32> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "toolcell", &mut out);
    std::io::stdout()
        .lock()
        .write_all(&out)
        .context("cannot write the completions")?;
    Ok(EXIT_OK)
}

/// Prints the manual page, or writes every page into a folder.
pub fn man(args: ManArgs) -> Result<i32> {
    let command = Cli::command();
    let Some(dir) = args.out else {
        let mut out = Vec::new();
        clap_mangen::Man::new(command).render(&mut out)?;
        std::io::stdout()
            .lock()
            .write_all(&out)
            .context("cannot write the manual page")?;
        return Ok(EXIT_OK);
    };
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot make the folder {}", dir.display()))?;
    let mut written = 0;
    // (page name, words that call it, command): `toolcell-runs-show` is
    // called as `toolcell runs show`.
    let mut pages = vec![(String::from("toolcell"), String::from("toolcell"), command)];
    while let Some((name, words, page)) = pages.pop() {
        for sub in page.get_subcommands().filter(|s| s.get_name() != "help") {
            let sub_name = format!("{name}-{}", sub.get_name());
            let sub_words = format!("{words} {}", sub.get_name());
            let sub = sub
                .clone()
                .display_name(sub_name.clone())
                .bin_name(sub_words.clone());
            pages.push((sub_name, sub_words, sub));
        }
        let mut out = Vec::new();
        clap_mangen::Man::new(page).render(&mut out)?;
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, out).with_context(|| format!("cannot write {}", path.display()))?;
        written += 1;
    }
    say!(
        "toolcell: wrote {written} manual pages into {}",
        dir.display()
    );
    Ok(EXIT_OK)
}
