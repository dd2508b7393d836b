//! The [`Protector`]: init keeps every denied path under the writable trees under a
//! placeholder and git's metadata pinned or read-only (`sandbox::paths::git_protection`)
//! as the trees change, reacting to inotify events while commands run (issue 25 §4, X7),
//! not only before the next one.

use super::mounts::{Placeholders, bind_read_only, cover, mount};
use crate::sandbox::paths::{self, Protect};
use crate::sandbox::wire::Setup;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use std::collections::{HashMap, HashSet};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::path::{Path, PathBuf};

/// One walk when the jail starts, with an inotify watch on every directory it visits;
/// then each event is handled as it comes: a denied path that appears is covered at
/// once, and so is a protected git name that appears in a git directory already pinned
/// (it is moved aside: `.git/commondir` pointing at a planted config, X1). Git metadata
/// that appears elsewhere (a repository, submodule or worktree being made) is protected
/// before the next command starts, or at once when no command runs: git writes a new
/// repository's config several times while making it. Where the watches run out
/// (`fs.inotify.max_user_watches`) or the event queue overflows, it walks everything
/// before every command instead.
pub(super) struct Protector<'a> {
    setup: &'a Setup,
    deny: crate::scope::Scope,
    placeholders: Placeholders,
    inotify: Option<Inotify>,
    watched: HashMap<WatchDescriptor, PathBuf>,
    covered: HashSet<PathBuf>,
    /// Git directories pinned: a protected name may not appear in them.
    git_dirs: HashSet<PathBuf>,
    /// Git metadata found while commands run, protected before the next one.
    pending: Vec<(PathBuf, Protect)>,
    /// What protected configs name in the writable trees (`core.hooksPath = .husky/_`),
    /// with the (device, inode) there when the config was read: read-only where it
    /// existed, and whatever is put there later is moved aside.
    named: HashMap<PathBuf, Option<(u64, u64)>>,
    walk_every_time: bool,
}

impl<'a> Protector<'a> {
    pub(super) fn new(
        setup: &'a Setup,
        placeholders: Placeholders,
    ) -> Result<Protector<'a>, String> {
        let deny = crate::scope::Scope::new(Vec::new(), setup.deny_patterns.clone())
            .map_err(|e| format!("the deny list: {e}"))?;
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok();
        let mut p = Protector {
            setup,
            deny,
            placeholders,
            walk_every_time: inotify.is_none(),
            inotify,
            watched: HashMap::new(),
            covered: HashSet::new(),
            git_dirs: HashSet::new(),
            pending: Vec::new(),
            named: HashMap::new(),
        };
        // Denied paths outside the writable trees (X6): covered once, nothing watches
        // there (commands cannot make anything there).
        for path in paths::denied_outside(&setup.deny_patterns, &setup.write) {
            p.protect(path, Protect::Deny);
        }
        for root in &setup.write {
            p.walk(root.clone(), true, false);
        }
        Ok(p)
    }

    /// The descriptor to poll for events, while it is watched.
    pub(super) fn fd(&self) -> Option<RawFd> {
        match &self.inotify {
            Some(i) if !self.walk_every_time => Some(i.as_fd().as_raw_fd()),
            _ => None,
        }
    }

    /// Walks `dir`'s tree, protecting what it finds (and watching each directory); git
    /// metadata waits for [`Protector::settle`] when `defer_git`.
    fn walk(&mut self, dir: PathBuf, watch: bool, defer_git: bool) {
        let mut stack = vec![dir];
        let mut found = Vec::new();
        while let Some(dir) = stack.pop() {
            if watch {
                self.watch(&dir);
            }
            paths::scan_dir(
                &dir,
                &self.setup.write,
                &self.deny,
                self.setup.protect_git,
                &mut found,
                &mut stack,
            );
        }
        self.dispatch(found, defer_git);
    }

    fn dispatch(&mut self, found: Vec<(PathBuf, Protect)>, defer_git: bool) {
        for (path, kind) in found {
            if kind == Protect::Deny {
                self.protect(path, kind);
            } else {
                self.pending.push((path, kind));
            }
        }
        if !defer_git {
            self.settle();
        }
    }

    /// Protects the git metadata found so far, outermost first (a pinned `.git` before
    /// its config, which is then bound inside the pin).
    pub(super) fn settle(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_by_key(|(p, _)| p.components().count());
        for (path, kind) in pending {
            self.protect(path, kind);
        }
    }

    fn watch(&mut self, dir: &Path) {
        if self.walk_every_time {
            return;
        }
        let Some(inotify) = &self.inotify else {
            return;
        };
        let flags = AddWatchFlags::IN_CREATE
            | AddWatchFlags::IN_MOVED_TO
            | AddWatchFlags::IN_ONLYDIR
            | AddWatchFlags::IN_DONT_FOLLOW;
        match inotify.add_watch(dir, flags) {
            // The same directory met again (moved): its events now name the new place.
            Ok(wd) => {
                self.watched.insert(wd, dir.to_path_buf());
            }
            // Out of watches: from now on, walk everything before each command.
            Err(nix::errno::Errno::ENOSPC) => self.walk_every_time = true,
            Err(_) => {}
        }
    }

    fn protect(&mut self, path: PathBuf, kind: Protect) {
        if self.covered.contains(&path) {
            return;
        }
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        let done = match kind {
            Protect::Deny => cover(&path, &self.placeholders),
            Protect::ReadOnly => bind_read_only(&path, &path),
            // A bind of a directory onto itself makes it a mount point: rename and
            // rmdir fail (EBUSY), writes inside go on. A file is all content.
            Protect::Pin if is_dir => mount(Some(&path), &path, None, libc::MS_BIND | libc::MS_REC),
            Protect::Pin => bind_read_only(&path, &path),
        };
        if done.is_ok() {
            if kind == Protect::Pin && is_dir && paths::is_git_dir_pin(&path) {
                self.git_dirs.insert(path.clone());
            }
            let config = ["config", "config.worktree"]
                .iter()
                .any(|n| path.file_name().is_some_and(|f| f == *n));
            self.covered.insert(path.clone());
            if kind == Protect::ReadOnly && config && !is_dir {
                self.guard_named(&path);
            }
        }
    }

    /// Protects what the config at `config` names in the writable trees (the hooks
    /// directory, scripts it runs, files it includes): read-only where it exists, moved
    /// aside if it appears later ([`Protector::check_named`]).
    fn guard_named(&mut self, config: &Path) {
        for path in crate::sandbox::gitconfig::config_named(config, &self.setup.write) {
            if self.named.contains_key(&path) {
                continue;
            }
            let id = identity(&path);
            if id.is_some() && bind_read_only(&path, &path).is_ok() {
                self.covered.insert(path.clone());
            }
            self.named.insert(path, id);
        }
    }

    /// Moves aside whatever now stands where a protected config named something that
    /// was not there, or something else, when the config was read.
    fn check_named(&self) {
        for (path, id) in &self.named {
            let now = identity(path);
            if now.is_some() && now != *id {
                refuse(path);
            }
        }
    }

    /// Handles the events queued so far; `commands_running`: git metadata that appeared
    /// waits for [`Protector::settle`].
    pub(super) fn on_events(&mut self, commands_running: bool) {
        let Some(inotify) = &self.inotify else {
            return;
        };
        let mut appeared: Vec<PathBuf> = Vec::new();
        while let Ok(events) = inotify.read_events() {
            if events.is_empty() {
                break;
            }
            for e in events {
                if e.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                    self.walk_every_time = true;
                }
                if e.mask.contains(AddWatchFlags::IN_IGNORED) {
                    self.watched.remove(&e.wd);
                    continue;
                }
                let (Some(dir), Some(name)) = (self.watched.get(&e.wd), &e.name) else {
                    continue;
                };
                appeared.push(dir.join(name));
            }
        }
        if self.walk_every_time {
            return self.walk_all(commands_running);
        }
        self.handle(appeared, commands_running);
        self.check_named();
    }

    fn handle(&mut self, appeared: Vec<PathBuf>, commands_running: bool) {
        for path in appeared {
            // A new entry at a covered name: the cover went with the old one.
            self.covered.remove(&path);
            let parent = path.parent().unwrap_or(Path::new("/"));
            if self.git_dirs.contains(parent)
                && paths::git_protection(&path) == Some(Protect::ReadOnly)
            {
                refuse(&path);
            } else if let Ok(meta) = std::fs::symlink_metadata(&path) {
                let in_git = parent.iter().any(|c| c == ".git");
                let mut found = Vec::new();
                let descend = paths::scan_entry(
                    &path,
                    meta.file_type(),
                    in_git,
                    &self.setup.write,
                    &self.deny,
                    self.setup.protect_git,
                    &mut found,
                );
                self.dispatch(found, commands_running);
                if descend {
                    // A new directory (made, or moved in): its whole tree.
                    self.walk(path, true, commands_running);
                }
            }
        }
    }

    fn walk_all(&mut self, defer_git: bool) {
        self.covered.clear();
        for root in self.setup.write.clone() {
            self.walk(root, false, defer_git);
        }
        self.check_named();
    }

    /// Before a command: protect what appeared since the last one.
    pub(super) fn before_command(&mut self) {
        if self.walk_every_time {
            return self.walk_all(false);
        }
        self.on_events(false);
        self.settle();
        self.check_named();
    }
}

/// The (device, inode) at `path`, its last symlink not followed.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// A protected git name made in a pinned git directory (`.git/commondir`, a new
/// `hooks/`): git must never read it, so it is moved aside under a name git ignores
/// (removed if that fails).
fn refuse(path: &Path) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".refused-by-sandbox-{nanos}"));
    if std::fs::rename(path, &aside).is_err() {
        let _ = std::fs::remove_dir_all(path).or_else(|_| std::fs::remove_file(path));
    }
}
