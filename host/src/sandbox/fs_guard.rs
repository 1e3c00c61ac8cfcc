//! The cell's file system, guarded: wasmtime-wasi's `wasi:filesystem` with
//! toolcell's file rules ([`crate::policy`]) checked on every call that
//! names a path, for every tool (built-in or not).
//!
//! - A change (open for writing, create, truncate, rename, link, remove,
//!   set times) of a policy file is refused with `not-permitted`, unless
//!   this call was approved for exactly that file by a person at a
//!   terminal ([`FileGuard::allow_policy_change`]); the trash of
//!   `.toolcell/` may only be added to.
//! - Opening a secret, for reading or writing, is refused with `access`.
//!
//! Paths are judged where they really lead: the folder a path is relative
//! to, and the folders on the way, are resolved by the kernel beneath that
//! folder (`openat2` with `RESOLVE_BENEATH`, as the sandbox itself resolves
//! them), so a link or `..` cannot dress a policy file as another. What was
//! refused is kept ([`FileGuard::refusals`]) so the host can tell the caller
//! why in its own words, whatever the tool made of the error.

use super::preopened::PreopenedPaths;
use super::refusal::Refusal;
use crate::policy::secrets::ClearFolder;
use crate::policy::{FileRules, PolicyFile, Touch};
use crate::util::openat::{host_path_of, joined_without_links, openat2};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::OpenMode;
use wasmtime_wasi::filesystem::{Descriptor, Dir, File, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::preopens;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, ErrorCode, HostDescriptor, HostDirectoryEntryStream,
};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream};
use wasmtime_wasi::p2::{FsError, FsResult};

/// The rules of one cell and what they refused.
#[derive(Debug)]
pub struct FileGuard {
    rules: Arc<FileRules>,
    /// The preopened roots: host path (canonical) and the name tools use.
    roots: Vec<(PathBuf, String)>,
    /// Policy files this call may change (approved at a terminal).
    allowed: Vec<PathBuf>,
    refusals: Vec<Refusal>,
    /// The host path of each preopened folder's descriptor: paths under
    /// them are judged without asking the kernel where a descriptor leads.
    preopened: PreopenedPaths,
    /// The preopened folders as the tool was handed them, for listing
    /// folders beneath them ([`super::folders`]).
    root_dirs: Vec<RootDir>,
    /// The last folder found to hold no secret, for the files in it.
    clear_folder: ClearFolder,
}

/// A preopened root: the name tools use, its host path and its descriptor.
#[derive(Debug, Clone)]
pub(super) struct RootDir {
    pub mount: String,
    pub host: PathBuf,
    pub dir: Arc<std::fs::File>,
}

impl FileGuard {
    pub fn new(rules: Arc<FileRules>, roots: Vec<(PathBuf, String)>) -> Self {
        Self {
            rules,
            roots,
            allowed: Vec::new(),
            refusals: Vec::new(),
            preopened: PreopenedPaths::default(),
            root_dirs: Vec::new(),
            clear_folder: ClearFolder::default(),
        }
    }

    /// A guard that judges as this one does, for reading on another thread:
    /// its roots and rules, none of what this one recorded.
    pub(super) fn judging_copy(&self) -> Self {
        Self {
            rules: Arc::clone(&self.rules),
            roots: self.roots.clone(),
            allowed: Vec::new(),
            refusals: Vec::new(),
            preopened: PreopenedPaths::default(),
            root_dirs: self.root_dirs.clone(),
            clear_folder: ClearFolder::default(),
        }
    }

    /// Forgets the descriptor that was resource `rep`: it is gone.
    pub(super) fn forget_descriptor(&mut self, rep: u32) {
        self.preopened.forget(rep);
    }

    /// The preopened roots, once the tool asked for them.
    pub(super) fn root_dirs(&self) -> &[RootDir] {
        &self.root_dirs
    }

    /// Lets this call change the policy files at `paths` (host paths).
    pub fn allow_policy_change(&mut self, paths: &[PathBuf]) {
        self.allowed = paths.to_vec();
    }

    /// What was refused, in order.
    pub fn refusals(&self) -> &[Refusal] {
        &self.refusals
    }

    /// `host` as the tool addresses it (`notes/a.md`, `docs/x`).
    fn shown(&self, host: &Path) -> String {
        self.root_relative(host)
            .map(|(mount, relative)| match mount {
                "." => relative.display().to_string(),
                _ => Path::new(mount).join(relative).display().to_string(),
            })
            .unwrap_or_else(|| host.display().to_string())
    }

    /// The root holding `host` (the deepest, as roots may nest) and the path inside it.
    fn root_relative<'p>(&self, host: &'p Path) -> Option<(&str, &'p Path)> {
        self.roots
            .iter()
            .filter_map(|(root, mount)| {
                host.strip_prefix(root)
                    .ok()
                    .map(|rel| (root.as_os_str().len(), mount.as_str(), rel))
            })
            .max_by_key(|(len, _, _)| *len)
            .map(|(_, mount, rel)| (mount, rel))
    }

    /// Refuses `host` (a path under a root) when it is a secret, keeping
    /// the refusal.
    pub(super) fn secret(&mut self, host: &Path) -> Result<(), ErrorCode> {
        match self.secret_refusal(host) {
            Some(refusal) => {
                self.refuse(refusal);
                Err(ErrorCode::Access)
            }
            None => Ok(()),
        }
    }

    /// The refusal of `host` when it is a secret, not yet kept (for threads
    /// that judge paths side by side; [`FileGuard::refuse`] keeps it).
    pub(super) fn secret_refusal(&self, host: &Path) -> Option<Refusal> {
        let (_, relative) = self.root_relative(host)?;
        let pattern = (self.rules.secrets).secret_remembering(relative, &self.clear_folder)?;
        Some(Refusal::Secret {
            shown: self.shown(host),
            pattern: pattern.to_string(),
        })
    }

    fn change(&mut self, host: &Path, change: Touch) -> Result<(), ErrorCode> {
        if let Some(file) = self.rules.policy.judge(host, change) {
            // `delete_path` adds to the trash: it may make `.toolcell/`,
            // `.toolcell/trash/` and move things into the trash, no more.
            let named =
                |p: Option<&Path>, name: &str| p.and_then(Path::file_name) == Some(name.as_ref());
            let state = crate::util::locations::STATE_DIR;
            let adds_to_trash =
                matches!(file, PolicyFile::State { trash: true }) && change == Touch::MoveInto;
            let makes_trash = change == Touch::CreateFolder
                && (named(Some(host), state)
                    || (named(Some(host), "trash") && named(host.parent(), state)));
            let approved = !file.never_changed_by_tools() && self.allowed.iter().any(|a| a == host);
            if !adds_to_trash && !makes_trash && !approved {
                let refusal = Refusal::Policy {
                    shown: self.shown(host),
                    file,
                };
                self.refuse(refusal);
                return Err(ErrorCode::NotPermitted);
            }
        }
        if change.takes_contents()
            && let Some((_, relative)) = self.root_relative(host)
            && let Some(pattern) = self.rules.secrets.holds_secret(relative)
        {
            let refusal = Refusal::Secret {
                shown: self.shown(host),
                pattern: pattern.to_string(),
            };
            self.refuse(refusal);
            return Err(ErrorCode::Access);
        }
        self.secret(host)
    }

    /// Keeps `refusal`, once.
    pub(super) fn refuse(&mut self, refusal: Refusal) {
        tracing::debug!("file guard: {refusal:?}");
        if !self.refusals.contains(&refusal) {
            self.refusals.push(refusal);
        }
    }
}

/// The guarded file system of one cell, for the linker.
pub struct GuardedFs<'a> {
    pub inner: WasiFilesystemCtxView<'a>,
    pub guard: &'a mut FileGuard,
}

/// The [`HasData`] of [`GuardedFs`].
pub struct Guarded;

impl HasData for Guarded {
    type Data<'a> = GuardedFs<'a>;
}

impl GuardedFs<'_> {
    /// The host path of the directory `fd` and the path under it, resolved
    /// as the kernel would beneath it; the last link followed if `follow`.
    fn resolve(
        &mut self,
        fd: &Resource<types::Descriptor>,
        path: &str,
        follow: bool,
    ) -> Result<PathBuf, ErrorCode> {
        let dir = match self
            .inner
            .table
            .get(fd)
            .map_err(|_| ErrorCode::BadDescriptor)?
        {
            Descriptor::Dir(dir) => dir.dir.clone(),
            Descriptor::File(_) => return Err(ErrorCode::NotDirectory),
        };
        let dirfd = dir.as_raw_fd();
        let trimmed = path.trim_end_matches('/');
        let (parent, name) = match trimmed.rsplit_once('/') {
            Some((parent, name)) => (if parent.is_empty() { "/" } else { parent }, name),
            None => (".", trimmed),
        };
        if follow || name.is_empty() || name == "." || name == ".." {
            match openat2(
                dirfd,
                Path::new(if trimmed.is_empty() { "." } else { trimmed }),
                libc::O_PATH,
                libc::RESOLVE_BENEATH,
            ) {
                Ok(target) => {
                    return host_path_of(target.as_raw_fd()).map_err(|e| ErrorCode::from(&e));
                }
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound
                        && !name.is_empty()
                        && name != "."
                        && name != ".." => {}
                Err(e) => return Err(ErrorCode::from(&e)),
            }
        }
        let folder = openat2(
            dirfd,
            Path::new(parent),
            libc::O_PATH | libc::O_DIRECTORY,
            libc::RESOLVE_BENEATH,
        )
        .map_err(|e| ErrorCode::from(&e))?;
        let folder = host_path_of(folder.as_raw_fd()).map_err(|e| ErrorCode::from(&e))?;
        Ok(folder.join(name))
    }

    /// Refuses `change` of `path` under `fd` when the rules say so.
    fn check(
        &mut self,
        fd: &Resource<types::Descriptor>,
        path: &str,
        follow: bool,
        change: Touch,
    ) -> FsResult<()> {
        let host = self.resolve(fd, path, follow)?;
        self.guard.change(&host, change)?;
        Ok(())
    }

    /// Where `path` under the preopened `folder` leads, when no link
    /// lies on the way (the kernel says so): the two joined. `None` when
    /// that cannot be told this cheaply.
    fn without_links(&self, folder: &(u32, Arc<std::fs::File>), path: &str) -> Option<PathBuf> {
        let base = self.guard.preopened.path(folder.0, &folder.1)?;
        let relative = if path.is_empty() { "." } else { path };
        openat2(
            folder.1.as_raw_fd(),
            Path::new(relative),
            libc::O_PATH,
            libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS,
        )
        .ok()?;
        Some(joined_without_links(base, relative))
    }

    /// Opens `path` under the preopened folder `fd` for reading only, in
    /// one `openat2` that allows no link on the way (and one `statx` to tell
    /// a folder from a file), where wasmtime-wasi's `open-at` makes four
    /// calls and the guard two more: a tool that reads thousands of files
    /// (search) pays that thousands of times. `None` when this cannot be
    /// done so simply (other flags, a link on the way, any error): the
    /// caller then opens the usual way, which also says what went wrong.
    fn open_for_reading(
        &mut self,
        fd: &Resource<types::Descriptor>,
        path: &str,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> Option<FsResult<Resource<types::Descriptor>>> {
        if oflags != types::OpenFlags::empty()
            || flags != types::DescriptorFlags::READ
            || path.is_empty()
        {
            return None;
        }
        let Descriptor::Dir(dir) = self.inner.table.get(fd).ok()? else {
            return None;
        };
        let base = self.guard.preopened.path(fd.rep(), &dir.dir)?.clone();
        let perms = dir.perms;
        let opened = openat2(
            dir.dir.as_raw_fd(),
            Path::new(path),
            libc::O_RDONLY | libc::O_NOCTTY,
            libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS,
        )
        .ok()?;
        let file = std::fs::File::from(opened);
        let is_dir = file.metadata().ok()?.is_dir();
        if let Err(code) = self.guard.secret(&joined_without_links(&base, path)) {
            return Some(Err(code.into()));
        }
        // As wasmtime-wasi makes them: the folder's permissions, opened
        // for reading, on the calling thread (the cell allows blocking it).
        let descriptor = if is_dir {
            Descriptor::Dir(Dir::new(file, perms, OpenMode::READ, true))
        } else {
            Descriptor::File(File::new(file, perms, OpenMode::READ, true))
        };
        Some(self.inner.table.push(descriptor).map_err(Into::into))
    }

    /// Refuses a descriptor just opened (through `path` under `folder`,
    /// its resource and file) that turns out to be a secret (or, opened for
    /// writing, a policy file), closing it.
    fn check_opened(
        &mut self,
        folder: Option<(u32, Arc<std::fs::File>)>,
        path: &str,
        opened: Resource<types::Descriptor>,
        writing: bool,
    ) -> FsResult<Resource<types::Descriptor>> {
        let raw = match self.inner.table.get(&opened)? {
            Descriptor::Dir(dir) => dir.dir.as_raw_fd(),
            Descriptor::File(file) => file.file.as_raw_fd(),
        };
        // Reading, the common case: a path without links under a root is
        // judged as written (about 1 µs); anything else by where the
        // opened descriptor really leads (`/proc/self/fd`, a few µs more).
        let host = match (&folder, writing) {
            (Some(folder), false) => self.without_links(folder, path).map(Ok),
            _ => None,
        }
        .unwrap_or_else(|| host_path_of(raw));
        let verdict = match host {
            Ok(host) if writing => self.guard.change(&host, Touch::Replace),
            Ok(host) => self.guard.secret(&host),
            Err(e) => Err(ErrorCode::from(&e)),
        };
        match verdict {
            Ok(()) => Ok(opened),
            Err(code) => {
                self.inner.table.delete(opened)?;
                Err(code.into())
            }
        }
    }
}

impl preopens::Host for GuardedFs<'_> {
    fn get_directories(&mut self) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
        let directories = preopens::Host::get_directories(&mut self.inner)?;
        for (descriptor, guest) in &directories {
            if let Some((host, _)) = self.guard.roots.iter().find(|(_, mount)| mount == guest)
                && let Ok(Descriptor::Dir(dir)) = self.inner.table.get(descriptor)
            {
                let (rep, dir) = (descriptor.rep(), dir.dir.clone());
                self.guard.preopened.insert(rep, host.clone(), dir.clone());
                if !self.guard.root_dirs.iter().any(|r| &r.mount == guest) {
                    self.guard.root_dirs.push(RootDir {
                        mount: guest.clone(),
                        host: host.clone(),
                        dir,
                    });
                }
            }
        }
        Ok(directories)
    }
}

impl types::Host for GuardedFs<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<ErrorCode> {
        types::Host::convert_error_code(&mut self.inner, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        types::Host::filesystem_error_code(&mut self.inner, err)
    }
}

impl HostDescriptor for GuardedFs<'_> {
    async fn advise(
        &mut self,
        fd: Resource<types::Descriptor>,
        offset: types::Filesize,
        len: types::Filesize,
        advice: types::Advice,
    ) -> FsResult<()> {
        HostDescriptor::advise(&mut self.inner, fd, offset, len, advice).await
    }

    async fn sync_data(&mut self, fd: Resource<types::Descriptor>) -> FsResult<()> {
        HostDescriptor::sync_data(&mut self.inner, fd).await
    }

    async fn get_flags(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<types::DescriptorFlags> {
        HostDescriptor::get_flags(&mut self.inner, fd).await
    }

    async fn get_type(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<types::DescriptorType> {
        HostDescriptor::get_type(&mut self.inner, fd).await
    }

    async fn set_size(
        &mut self,
        fd: Resource<types::Descriptor>,
        size: types::Filesize,
    ) -> FsResult<()> {
        HostDescriptor::set_size(&mut self.inner, fd, size).await
    }

    async fn set_times(
        &mut self,
        fd: Resource<types::Descriptor>,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        HostDescriptor::set_times(&mut self.inner, fd, atim, mtim).await
    }

    async fn read(
        &mut self,
        fd: Resource<types::Descriptor>,
        len: types::Filesize,
        offset: types::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        HostDescriptor::read(&mut self.inner, fd, len, offset).await
    }

    async fn write(
        &mut self,
        fd: Resource<types::Descriptor>,
        buf: Vec<u8>,
        offset: types::Filesize,
    ) -> FsResult<types::Filesize> {
        HostDescriptor::write(&mut self.inner, fd, buf, offset).await
    }

    async fn read_directory(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<Resource<types::DirectoryEntryStream>> {
        HostDescriptor::read_directory(&mut self.inner, fd).await
    }

    async fn sync(&mut self, fd: Resource<types::Descriptor>) -> FsResult<()> {
        HostDescriptor::sync(&mut self.inner, fd).await
    }

    async fn create_directory_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path: String,
    ) -> FsResult<()> {
        self.check(&fd, &path, false, Touch::CreateFolder)?;
        HostDescriptor::create_directory_at(&mut self.inner, fd, path).await
    }

    async fn stat(&mut self, fd: Resource<types::Descriptor>) -> FsResult<types::DescriptorStat> {
        HostDescriptor::stat(&mut self.inner, fd).await
    }

    async fn stat_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::DescriptorStat> {
        HostDescriptor::stat_at(&mut self.inner, fd, path_flags, path).await
    }

    async fn set_times_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        let follow = path_flags.contains(types::PathFlags::SYMLINK_FOLLOW);
        self.check(&fd, &path, follow, Touch::Replace)?;
        HostDescriptor::set_times_at(&mut self.inner, fd, path_flags, path, atim, mtim).await
    }

    async fn link_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        old_path_flags: types::PathFlags,
        old_path: String,
        new_descriptor: Resource<types::Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        // A second name for a policy file or a secret is a way to change or
        // read it under another name.
        let follow = old_path_flags.contains(types::PathFlags::SYMLINK_FOLLOW);
        self.check(&fd, &old_path, follow, Touch::Replace)?;
        self.check(&new_descriptor, &new_path, false, Touch::Replace)?;
        HostDescriptor::link_at(
            &mut self.inner,
            fd,
            old_path_flags,
            old_path,
            new_descriptor,
            new_path,
        )
        .await
    }

    async fn open_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Resource<types::Descriptor>> {
        let writing = oflags.intersects(types::OpenFlags::CREATE | types::OpenFlags::TRUNCATE)
            || flags.intersects(
                types::DescriptorFlags::WRITE | types::DescriptorFlags::MUTATE_DIRECTORY,
            );
        if writing {
            let follow = path_flags.contains(types::PathFlags::SYMLINK_FOLLOW);
            self.check(&fd, &path, follow, Touch::Replace)?;
        }
        if !writing && let Some(opened) = self.open_for_reading(&fd, &path, oflags, flags) {
            return opened;
        }
        let folder = match self.inner.table.get(&fd)? {
            Descriptor::Dir(dir) => Some((fd.rep(), dir.dir.clone())),
            Descriptor::File(_) => None,
        };
        let opened =
            HostDescriptor::open_at(&mut self.inner, fd, path_flags, path.clone(), oflags, flags)
                .await?;
        self.check_opened(folder, &path, opened, writing)
    }

    fn drop(&mut self, fd: Resource<types::Descriptor>) -> wasmtime::Result<()> {
        // Its resource may be reused for another folder.
        self.guard.forget_descriptor(fd.rep());
        HostDescriptor::drop(&mut self.inner, fd)
    }

    async fn readlink_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path: String,
    ) -> FsResult<String> {
        HostDescriptor::readlink_at(&mut self.inner, fd, path).await
    }

    async fn remove_directory_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path: String,
    ) -> FsResult<()> {
        self.check(&fd, &path, false, Touch::Remove)?;
        HostDescriptor::remove_directory_at(&mut self.inner, fd, path).await
    }

    async fn rename_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        old_path: String,
        new_fd: Resource<types::Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        self.check(&fd, &old_path, false, Touch::MoveAway)?;
        self.check(&new_fd, &new_path, false, Touch::MoveInto)?;
        HostDescriptor::rename_at(&mut self.inner, fd, old_path, new_fd, new_path).await
    }

    async fn symlink_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        let link = self.resolve(&fd, &dest_path, false)?;
        self.guard.change(&link, Touch::Replace)?;
        // The user's own programs would follow a link out of its root.
        if super::links::leads_out(&self.guard.roots, &link, &src_path) {
            return Err(ErrorCode::NotPermitted.into());
        }
        HostDescriptor::symlink_at(&mut self.inner, fd, src_path, dest_path).await
    }

    async fn unlink_file_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path: String,
    ) -> FsResult<()> {
        self.check(&fd, &path, false, Touch::Replace)?;
        HostDescriptor::unlink_file_at(&mut self.inner, fd, path).await
    }

    fn read_via_stream(
        &mut self,
        fd: Resource<types::Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynInputStream>> {
        HostDescriptor::read_via_stream(&mut self.inner, fd, offset)
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<types::Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynOutputStream>> {
        HostDescriptor::write_via_stream(&mut self.inner, fd, offset)
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<Resource<DynOutputStream>> {
        HostDescriptor::append_via_stream(&mut self.inner, fd)
    }

    async fn is_same_object(
        &mut self,
        a: Resource<types::Descriptor>,
        b: Resource<types::Descriptor>,
    ) -> wasmtime::Result<bool> {
        HostDescriptor::is_same_object(&mut self.inner, a, b).await
    }

    async fn metadata_hash(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<types::MetadataHashValue> {
        HostDescriptor::metadata_hash(&mut self.inner, fd).await
    }

    async fn metadata_hash_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::MetadataHashValue> {
        HostDescriptor::metadata_hash_at(&mut self.inner, fd, path_flags, path).await
    }
}

impl HostDirectoryEntryStream for GuardedFs<'_> {
    async fn read_directory_entry(
        &mut self,
        stream: Resource<types::DirectoryEntryStream>,
    ) -> FsResult<Option<types::DirectoryEntry>> {
        HostDirectoryEntryStream::read_directory_entry(&mut self.inner, stream).await
    }

    fn drop(&mut self, stream: Resource<types::DirectoryEntryStream>) -> wasmtime::Result<()> {
        HostDirectoryEntryStream::drop(&mut self.inner, stream)
    }
}
