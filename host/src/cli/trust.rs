//! `toolcell trust`: the user's word that the workspace config, as it is
//! now, may start the programs it names (see [`crate::policy::trust`]), and
//! that a daemon may apply it even where it widens what schedules may do.

use super::{EXIT_OK, print_out};
use crate::config::WorkspaceConfig;
use crate::policy::trust::TrustStore;
use anyhow::{Context, Result, bail};

#[derive(Debug, clap::Args)]
pub struct TrustArgs {
    /// Forget the trust instead: the config starts no program until trusted again.
    #[arg(long)]
    revoke: bool,
}

pub fn run(config: &super::Chosen, args: TrustArgs) -> Result<i32> {
    let cwd = std::env::current_dir().context("cannot determine the current folder")?;
    let loaded = config.load(&cwd)?;
    let Some(file) = loaded.file.clone() else {
        bail!(
            "there is no toolcell.toml in {} or a folder above it: nothing to trust\n  fix: run it in the workspace, or pass --config FILE",
            cwd.display()
        );
    };
    if args.revoke {
        let store =
            TrustStore::for_user().context("no user data folder: set TOOLCELL_DATA_DIR or HOME")?;
        let said = match store.revoke(&crate::config::trust::trust_key(&file)?)? {
            true => "no longer trusted: it starts no program until you trust it again",
            false => "was not trusted",
        };
        print_out(&format!("{}: {said}", file.display()))?;
        return Ok(EXIT_OK);
    }
    let (fingerprint, programs) = WorkspaceConfig::trust(&file)?;
    let mut text = format!(
        "trusted {} as it is now (sha256 {}…)",
        file.display(),
        &fingerprint[..12]
    );
    if programs.is_empty() {
        text.push_str(": it asks nothing that needs trust");
    } else {
        text.push_str(": it may now use\n  - ");
        text.push_str(&programs.join("\n  - "));
    }
    text.push_str("\nany change to the file makes it untrusted again");
    print_out(&text)?;
    Ok(EXIT_OK)
}
