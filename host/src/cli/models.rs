//! `toolcell models [--probe]`: what is known of each model used so far
//! (native tools, thinking, context), as the servers reported it; `--probe`
//! asks the configured server about its model again first.

use super::{EXIT_ERROR, EXIT_OK, load_workspace, print_out};
use crate::llm;
use crate::store::{KnownBy, KnownModel, Store};
use crate::util::text::local_time as when;
use anyhow::{Result, anyhow};
use clap::Args;

#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// Ask the configured server about its model now (again), and remember the answer.
    #[arg(long)]
    probe: bool,
    /// The model to probe, instead of `name` under [model].
    #[arg(long, short, requires = "probe")]
    model: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(config: &super::Chosen, args: ModelsArgs) -> Result<i32> {
    let (config, _) = load_workspace(config)?;
    let store = Store::for_workspace(&config)?;
    if args.probe {
        let mut settings = config.model.clone();
        if let Some(name) = args.model {
            settings.name = Some(name);
        }
        let provider = llm::connect(&settings).map_err(|e| anyhow!("{e}"))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        match runtime.block_on(provider.probe()) {
            Ok(caps) => {
                store.remember_model(&provider.server(), provider.model(), caps, KnownBy::Probe)?
            }
            Err(e) => {
                say!("error: cannot probe {}: {e}", provider.describe());
                if let Some(hint) = e.hint() {
                    say!("  fix: {hint}");
                }
                return Ok(EXIT_ERROR);
            }
        }
    }
    let known = store.known_models()?;
    if args.json {
        print_out(&serde_json::to_string_pretty(&known)?)?;
    } else if known.is_empty() {
        print_out(
            "no model used yet: `toolcell chat` or `toolcell models --probe` asks the server",
        )?;
    } else {
        print_out(&table(&known))?;
    }
    Ok(EXIT_OK)
}

/// The known models as an aligned table.
fn table(known: &[KnownModel]) -> String {
    let yes_no = |v: Option<bool>| match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    };
    let mut rows = vec![[
        "SERVER".to_string(),
        "MODEL".into(),
        "TOOLS".into(),
        "THINKING".into(),
        "CONTEXT".into(),
        "FROM".into(),
        "CHECKED".into(),
    ]];
    for k in known {
        rows.push([
            // Names from the store (a config or a server said them): each
            // a table cell, on its row.
            crate::util::text::for_terminal_line(&k.server).into_owned(),
            crate::util::text::for_terminal_line(&k.model).into_owned(),
            match k.tools {
                Some(false) => "no (text format)".into(),
                tools => yes_no(tools).into(),
            },
            yes_no(k.thinking).into(),
            k.context_length.map_or("?".into(), |n| n.to_string()),
            k.known_by.as_str().into(),
            when(k.checked_at),
        ]);
    }
    let widths: Vec<usize> = (0..7)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|row| {
            row.iter()
                .zip(&widths)
                .map(|(cell, width)| format!("{cell:width$}"))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
