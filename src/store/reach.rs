//! Whether another user can redirect the data dir after tmuxd has started.
//!
//! tmuxd opens its files by path for as long as it runs. If a directory on
//! the way to the data dir (or a symbolic link followed to reach it) can be
//! replaced by another user, that user can swap it for their own later, and
//! every write after goes into their directory. So the way is checked once
//! at start, each step as the kernel takes it (links followed one by one),
//! and a data dir reached through anything another user could replace is
//! refused, naming it. After the check nothing on the way can change but
//! by tmuxd's user or root, so it stays true.
//!
//! A step can be replaced by another user when its directory is writable by
//! one: the directory belongs to a user other than tmuxd's and root (who
//! can make it writable at will), or anyone may write to it, or its group
//! may and that group is not tmuxd's user's private group. A sticky
//! directory (`/tmp`) of tmuxd's user or root lets only an entry's owner
//! replace it: there the step is safe when the entry is tmuxd's user's or
//! root's.

use std::collections::VecDeque;
use std::ffi::{CStr, OsString};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use super::{StoreError, io_error};

/// Links followed at most, as the kernel does (`MAXSYMLINKS`).
const MAX_LINKS: usize = 40;
const STICKY: u32 = 0o1000;

/// Why another user can replace a step on the way to the data dir.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exposure {
    /// This directory belongs to that uid.
    DirectoryOwnedBy(u32),
    /// Anyone may write to this directory.
    WorldWritable,
    /// Members of this group, not only tmuxd's user, may write to it.
    GroupWritable(u32),
    /// In a sticky directory others write to, this entry belongs to that
    /// uid, who may replace it.
    EntryOwnedBy(u32),
}

impl std::fmt::Display for Exposure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exposure::DirectoryOwnedBy(uid) => write!(f, "a directory of uid {uid}"),
            Exposure::WorldWritable => write!(f, "a directory anyone may write to"),
            Exposure::GroupWritable(gid) => write!(f, "a directory group {gid} may write to"),
            Exposure::EntryOwnedBy(uid) => {
                write!(
                    f,
                    "which belongs to uid {uid} in a directory others write to"
                )
            }
        }
    }
}

/// Which of the two a step's exposure is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Culprit {
    /// The directory holding the step.
    Directory,
    /// The step itself (a directory or a link).
    Entry,
}

/// Owner, group and mode of a directory on the way.
#[derive(Clone, Copy, Debug)]
pub struct DirectoryFacts {
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
}

/// Whether another user can replace an entry owned by `entry_uid` in a
/// directory with `dir`'s facts, tmuxd running as `uid` (whose private
/// group, if any, is `private_gid`).
pub fn exposure(
    dir: DirectoryFacts,
    entry_uid: u32,
    uid: u32,
    private_gid: Option<u32>,
) -> Option<(Culprit, Exposure)> {
    let trusted = |owner: u32| owner == uid || owner == 0;
    let writable_by_others = if !trusted(dir.uid) {
        Exposure::DirectoryOwnedBy(dir.uid)
    } else if dir.mode & 0o002 != 0 {
        Exposure::WorldWritable
    } else if dir.mode & 0o020 != 0 && private_gid != Some(dir.gid) {
        Exposure::GroupWritable(dir.gid)
    } else {
        return None;
    };
    let sticky = dir.mode & STICKY != 0 && trusted(dir.uid);
    match (sticky, trusted(entry_uid)) {
        (true, true) => None,
        (true, false) => Some((Culprit::Entry, Exposure::EntryOwnedBy(entry_uid))),
        (false, _) => Some((Culprit::Directory, writable_by_others)),
    }
}

/// Refuses `data_dir` if another user can redirect the way to it:
/// `StoreError::Exposed` names the step. Where the way stops existing, the
/// directory it stops in is checked for the entries tmuxd would make there,
/// so nothing is made where another user could move it.
pub fn check_reach(data_dir: &Path) -> Result<(), StoreError> {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let uid = unsafe { libc::geteuid() };
    let private_gid = private_group(uid);
    let absolute = std::path::absolute(data_dir).map_err(io_error(data_dir))?;
    let mut steps: VecDeque<OsString> = names(&absolute).collect();
    let mut here = PathBuf::from("/");
    let mut links = 0;
    while let Some(name) = steps.pop_front() {
        if name == ".." {
            here.pop();
            continue;
        }
        let dir = std::fs::metadata(&here).map_err(io_error(&here))?;
        let step = here.join(&name);
        let entry = match std::fs::symlink_metadata(&step) {
            Ok(entry) => Some(entry),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_error(&step)(e)),
        };
        let facts = DirectoryFacts {
            uid: dir.uid(),
            gid: dir.gid(),
            mode: dir.mode(),
        };
        let owner = entry.as_ref().map_or(uid, MetadataExt::uid);
        if let Some((culprit, why)) = exposure(facts, owner, uid, private_gid) {
            let component = match culprit {
                Culprit::Directory => here,
                Culprit::Entry => step,
            };
            return Err(StoreError::Exposed {
                path: data_dir.to_path_buf(),
                component,
                why,
            });
        }
        let Some(entry) = entry else {
            return Ok(());
        };
        if entry.file_type().is_symlink() {
            links += 1;
            if links > MAX_LINKS {
                let source = std::io::Error::from_raw_os_error(libc::ELOOP);
                return Err(io_error(data_dir)(source));
            }
            let target = std::fs::read_link(&step).map_err(io_error(&step))?;
            if target.is_absolute() {
                here = PathBuf::from("/");
            }
            for name in names(&target).collect::<Vec<_>>().into_iter().rev() {
                steps.push_front(name);
            }
        } else {
            here = step;
        }
    }
    Ok(())
}

/// The names a path walks through, `..` kept (it is resolved against the
/// real directory reached, as the kernel does), `.` and `/` dropped.
fn names(path: &Path) -> impl Iterator<Item = OsString> + '_ {
    path.components().filter_map(|c| match c {
        Component::Normal(name) => Some(name.to_owned()),
        Component::ParentDir => Some("..".into()),
        Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
    })
}

/// The user's private group (a group named as the user, theirs as primary
/// group, listing no other member): then a directory writable by that
/// group is writable by the user alone. `None` when there is none.
fn private_group(uid: u32) -> Option<u32> {
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: getpwuid_r and getgrgid_r write into the structs and the
    // buffer we own, each of the given size; the pointers they return
    // point into them and are read before the buffer is reused.
    unsafe {
        let mut user: libc::passwd = std::mem::zeroed();
        let mut found = std::ptr::null_mut();
        let status = libc::getpwuid_r(uid, &mut user, buf.as_mut_ptr(), buf.len(), &mut found);
        if status != 0 || found.is_null() {
            return None;
        }
        let name = CStr::from_ptr(user.pw_name).to_owned();
        let gid = user.pw_gid;
        let mut group: libc::group = std::mem::zeroed();
        let mut found = std::ptr::null_mut();
        let status = libc::getgrgid_r(gid, &mut group, buf.as_mut_ptr(), buf.len(), &mut found);
        if status != 0 || found.is_null() || CStr::from_ptr(group.gr_name) != name.as_c_str() {
            return None;
        }
        let mut member = group.gr_mem;
        while !member.is_null() && !(*member).is_null() {
            if CStr::from_ptr(*member) != name.as_c_str() {
                return None;
            }
            member = member.add(1);
        }
        Some(gid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: u32 = 1000;
    const OTHER: u32 = 1001;
    const MINE: u32 = 1000;

    fn dir(uid: u32, gid: u32, mode: u32) -> DirectoryFacts {
        DirectoryFacts { uid, gid, mode }
    }

    #[test]
    fn who_can_replace_a_step() {
        use Culprit::{Directory, Entry};
        use Exposure::*;
        #[rustfmt::skip]
        let cases = [
            // (directory, the entry's owner, expected)
            (dir(ME, MINE, 0o700), ME, None),
            (dir(0, 0, 0o755), ME, None),
            (dir(0, 0, 0o755), OTHER, None),
            (dir(OTHER, OTHER, 0o755), ME, Some((Directory, DirectoryOwnedBy(OTHER)))),
            (dir(OTHER, OTHER, 0o1777), ME, Some((Directory, DirectoryOwnedBy(OTHER)))),
            (dir(ME, MINE, 0o777), ME, Some((Directory, WorldWritable))),
            (dir(0, 0, 0o1777), ME, None),
            (dir(0, 0, 0o1777), 0, None),
            (dir(0, 0, 0o1777), OTHER, Some((Entry, EntryOwnedBy(OTHER)))),
            (dir(ME, MINE, 0o1777), OTHER, Some((Entry, EntryOwnedBy(OTHER)))),
            (dir(ME, MINE, 0o775), ME, None),
            (dir(ME, 100, 0o775), ME, Some((Directory, GroupWritable(100)))),
            (dir(0, 100, 0o3775), ME, None),
        ];
        for (facts, entry_uid, want) in cases {
            assert_eq!(
                exposure(facts, entry_uid, ME, Some(MINE)),
                want,
                "{facts:?} {entry_uid}"
            );
        }
        let without_private_group = exposure(dir(ME, MINE, 0o775), ME, ME, None);
        assert_eq!(
            without_private_group,
            Some((Directory, GroupWritable(MINE)))
        );
    }

    #[test]
    fn names_keep_parents_and_drop_the_rest() {
        let walked: Vec<OsString> = names(Path::new("/a/./b/../c/")).collect();
        assert_eq!(walked, ["a", "b", "..", "c"]);
    }
}
