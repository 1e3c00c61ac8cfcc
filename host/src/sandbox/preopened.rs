//! The host folders a cell's preopened descriptors lead to, by resource.
//!
//! A path under a root's own descriptor is judged by joining the root's
//! host path and the path, without asking the kernel where the descriptor
//! leads. The descriptor is known by its resource's number, and a number is
//! reused once its resource is dropped: for a stream, or for a folder the
//! tool opens in a root, which would then be judged as the root. So each
//! entry keeps the descriptor's file as well and answers for that very
//! descriptor only, and a dropped descriptor is forgotten.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The preopened folders' host paths, by their descriptors' resources.
#[derive(Debug, Default)]
pub(super) struct PreopenedPaths(HashMap<u32, (PathBuf, Arc<std::fs::File>)>);

impl PreopenedPaths {
    /// Records that resource `rep`, holding `dir`, is the root at `host`.
    pub(super) fn insert(&mut self, rep: u32, host: PathBuf, dir: Arc<std::fs::File>) {
        self.0.insert(rep, (host, dir));
    }

    /// The host path of the root whose descriptor is resource `rep`
    /// holding `dir`; `None` for any other descriptor, one that took the
    /// number of a dropped root's descriptor included.
    pub(super) fn path(&self, rep: u32, dir: &Arc<std::fs::File>) -> Option<&PathBuf> {
        let (host, preopened) = self.0.get(&rep)?;
        Arc::ptr_eq(preopened, dir).then_some(host)
    }

    /// Forgets resource `rep`: its descriptor is gone.
    pub(super) fn forget(&mut self, rep: u32) {
        self.0.remove(&rep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_answers_only_for_the_descriptor_it_was_recorded_with() {
        let open = || Arc::new(std::fs::File::open(".").unwrap());
        let (root, other) = (open(), open());
        let mut paths = PreopenedPaths::default();
        paths.insert(3, PathBuf::from("/work"), root.clone());
        assert_eq!(paths.path(3, &root), Some(&PathBuf::from("/work")));
        assert_eq!(paths.path(3, &other), None, "another folder, same number");
        assert_eq!(paths.path(4, &root), None);
        paths.forget(3);
        assert_eq!(paths.path(3, &root), None, "forgotten once dropped");
    }
}
