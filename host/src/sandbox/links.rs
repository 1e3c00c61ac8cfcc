//! Where a link a tool creates would lead: a link whose target leaves the
//! root holding it is refused when it is made (`symlink-at`), since the
//! user's own shell, editor and programs would follow it out, even where
//! the tools do not.

use std::path::{Component, Path, PathBuf};

/// Whether a link at `link` (a host path) to `target` leads out of the
/// root of `roots` holding it (the deepest, as roots may nest; none: out).
pub fn leads_out(roots: &[(PathBuf, String)], link: &Path, target: &str) -> bool {
    let root = roots
        .iter()
        .map(|(root, _)| root)
        .filter(|root| link.starts_with(root))
        .max_by_key(|root| root.as_os_str().len());
    root.is_none_or(|root| leads_out_of(root, link, target))
}

/// Whether a link at `link` (a host path under `root`) to `target` leads
/// out of `root`: an absolute target, or one whose `..` climb above
/// `root`, read from the link's folder as the kernel reads it.
pub fn leads_out_of(root: &Path, link: &Path, target: &str) -> bool {
    let target = Path::new(target);
    if target.is_absolute() {
        return true;
    }
    let mut at = link.parent().unwrap_or(link).to_path_buf();
    for part in target.components() {
        match part {
            Component::Normal(name) => at.push(name),
            Component::ParentDir => {
                if !at.pop() || !at.starts_with(root) {
                    return true;
                }
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return true,
        }
    }
    !at.starts_with(root)
}

#[cfg(test)]
mod tests {
    use super::leads_out_of;
    use std::path::Path;

    #[test]
    fn a_link_may_point_anywhere_in_its_root_and_nowhere_outside() {
        let root = Path::new("/w/ws");
        let link = Path::new("/w/ws/data/link");
        for inside in ["a.txt", "../b.txt", "./sub/../c", "..", "sub/deep/../../x"] {
            assert!(!leads_out_of(root, link, inside), "{inside}");
        }
        for outside in [
            "../..",
            "../../ws-other/x",
            "/etc/passwd",
            "sub/../../../x",
            "../../ws",
        ] {
            assert!(leads_out_of(root, link, outside), "{outside}");
        }
        // `../../ws` names the root by going out of it: still outside on the way.
    }
}
