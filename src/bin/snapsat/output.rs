//! Where results go, without harming what is already there: no output may be an input,
//! the suite's file is created only when its first test is ready, and whole-file outputs
//! (statistics, emitted CNF) appear complete or not at all.

use crate::failure::{usage, Classify, Result};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// True when `a` and `b` name the same file: the same inode where both exist (through
/// links, `..` and symlinks), else the same absolute path.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    let absolute = |p: &Path| -> Option<PathBuf> {
        let parent = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        Some(parent.canonicalize().ok()?.join(p.file_name()?))
    };
    matches!((absolute(a), absolute(b)), (Some(x), Some(y)) if x == y)
}

/// True when `out` names what standard input reads: `-` is read through file descriptor 0,
/// which may be a file (`< f.cnf`) that `-o f.cnf`, `-o /dev/stdin` or `/proc/self/fd/0`
/// would empty before it is read. A terminal or `/dev/null` is no file to lose.
#[cfg(unix)]
fn is_standard_input(out: &Path) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(stdin) = io::stdin().as_fd().try_clone_to_owned() else {
        return false;
    };
    let (Ok(input), Ok(output)) = (File::from(stdin).metadata(), std::fs::metadata(out)) else {
        return false;
    };
    input.dev() == output.dev()
        && input.ino() == output.ino()
        && !input.file_type().is_char_device()
}

#[cfg(not(unix))]
fn is_standard_input(_: &Path) -> bool {
    false
}

/// True when the output `out` would write over the input named `input` (`-`: standard input).
fn overwrites(out: &Path, input: &Path) -> bool {
    if input.as_os_str() == "-" {
        is_standard_input(out)
    } else {
        same_file(out, input)
    }
}

/// Refuses (exit 2), before any work, an output that is an input or another output (`-o
/// f.cnf` on the formula would destroy it, whether it is named or read as `-` from standard
/// input), or that no file can be written to: a folder, a path in a folder that does not
/// exist (a `--stats` path like that failed only once the run had ended), or a path that
/// ends in `/`.
pub fn check_outputs(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> Result<()> {
    for (i, (flag, out)) in outputs.iter().enumerate() {
        if out.is_dir() {
            return Err(usage(format!(
                "{flag} {} is a folder; name a file in it",
                out.display()
            )));
        }
        if out.as_os_str().as_encoded_bytes().ends_with(b"/") {
            return Err(usage(format!(
                "{flag} {} ends in `/`: name a file, not a folder",
                out.display()
            )));
        }
        // Through a symbolic link, the file is made where the link points.
        let target = followed(out);
        let folder = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !folder.is_dir() {
            return Err(usage(format!(
                "{flag} {}: there is no folder {}",
                out.display(),
                folder.display()
            )));
        }
        for (what, input) in inputs {
            if overwrites(out, input) {
                return Err(usage(format!(
                    "{flag} {} is the {what}: it would be overwritten; choose another file",
                    out.display()
                )));
            }
        }
        for (other, earlier) in &outputs[..i] {
            if same_file(out, earlier) {
                return Err(usage(format!(
                    "{flag} and {other} are the same file ({}); give each its own",
                    out.display()
                )));
            }
        }
    }
    Ok(())
}

/// A file opened (created, truncated or appended to) at the first write, so that a run that
/// ends before its first test (unsatisfiable, a malformed flag, no solution in time) leaves
/// an existing file as it was.
pub struct LazyFile {
    path: PathBuf,
    append: bool,
    file: Option<File>,
}

impl LazyFile {
    pub fn create(path: &Path) -> Self {
        LazyFile {
            path: path.to_owned(),
            append: false,
            file: None,
        }
    }

    pub fn append(path: &Path) -> Self {
        LazyFile {
            append: true,
            ..LazyFile::create(path)
        }
    }

    fn file(&mut self) -> io::Result<&mut File> {
        if self.file.is_none() {
            let mut options = OpenOptions::new();
            if self.append {
                options.append(true);
            } else {
                options.write(true).create(true).truncate(true);
            }
            let file = options
                .open(&self.path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.path.display())))?;
            self.file = Some(file);
        }
        Ok(self.file.as_mut().expect("just opened"))
    }
}

impl Write for LazyFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

/// Writes a whole file through a temporary file in the same folder and a rename: readers
/// and a crash see the old file or the new one, never half of one. The rename replaces what
/// the path names, so it is kept for regular files: a symbolic link is followed to the file
/// it names (the link stays), and a device or a pipe (`--stats /dev/null`, `/dev/stdout`)
/// is written to in place — renamed over, as root, /dev/null had become a regular file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    // The kernel follows the links itself: `/dev/stdout` on a pipe leads through
    // `/proc/self/fd/1` to `pipe:[…]`, which names no file that a path could reach.
    let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
    let written = if special {
        OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(bytes).and_then(|()| f.flush()))
    } else {
        replace(&followed(path), bytes)
    };
    written.output(path.display())
}

/// `bytes` as the regular file `path`, through a temporary file beside it and a rename.
fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let temporary = path.with_file_name(format!(
        ".{}.{}.tmp",
        name.as_deref().unwrap_or("output"),
        std::process::id()
    ));
    let written = (|| {
        let mut file = File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// The path at the end of `path`'s symbolic links (itself if it is none, or a chain of more
/// than 40, which the write then reports as the system would).
fn followed(path: &Path) -> PathBuf {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&at) {
            Ok(next) => {
                at = match at.parent() {
                    Some(folder) => folder.join(next),
                    None => next,
                }
            }
            Err(_) => return at,
        }
    }
    path.to_path_buf()
}

/// Writes `text` to standard output; a closed or full stdout is an error (exit 1), not a panic.
pub fn print(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .output("standard output")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_file_is_found_through_links_and_dots() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f.cnf");
        std::fs::write(&f, "p cnf 1 0\n").unwrap();
        let link = dir.path().join("link.cnf");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        let dotted = dir.path().join(".").join("f.cnf");
        assert!(same_file(&f, &link));
        assert!(same_file(&f, &dotted));
        assert!(!same_file(&f, &dir.path().join("g.cnf")));
        let new = dir.path().join("new.txt");
        assert!(same_file(&new, &dir.path().join(".").join("new.txt")));
    }

    #[test]
    fn a_lazy_file_is_untouched_until_written() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("suite.txt");
        std::fs::write(&f, "kept\n").unwrap();
        drop(LazyFile::create(&f));
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "kept\n");
        let mut lazy = LazyFile::create(&f);
        lazy.write_all(b"new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new\n");
    }
}
