//! Build script: records which code this binary was built from, so every stored verdict
//! and every report stamp can name it (`sphragis::CODE_VERSION`).
//!
//! Sets `SPHRAGIS_GIT` to `<12-hex commit>` (plus `-dirty` when tracked files differ from
//! the commit) or to `no-git` when the source tree is not a git checkout or git is absent.

use std::path::PathBuf;
use std::process::Command;

/// The checkout being built, read when the script runs. Not `env!`: that is fixed when the
/// script is compiled, and one compiled script serves every checkout that shares a
/// `CARGO_TARGET_DIR` (`.ci/run`'s clone and the working copy): built in another checkout,
/// it asked git about that one, and stamped its commit, or `no-git` once it was deleted.
fn manifest_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(manifest_dir()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    for path in ["src", "sql", "migrations", "Cargo.toml", "build.rs"] {
        println!("cargo:rerun-if-changed={path}");
    }
    let described = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) if !commit.is_empty() => {
            // `git status --porcelain` lists tracked files that differ (untracked ones too
            // unless excluded: only tracked changes make the build "dirty"). Without
            // --no-optional-locks git refreshes the index as it looks, and that write made
            // the next build rebuild the crate for nothing (found by a fresh user).
            let dirty = git(&["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            // Rebuild when HEAD moves or the index changes (a commit, a checkout).
            for name in ["HEAD", "index"] {
                if let Some(p) = git(&["rev-parse", "--git-path", name]) {
                    let p = manifest_dir().join(p);
                    println!("cargo:rerun-if-changed={}", p.display());
                }
            }
            if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"])
                && let Some(p) = git(&["rev-parse", "--git-path", &head_ref])
            {
                println!("cargo:rerun-if-changed={}", manifest_dir().join(p).display());
            }
            if dirty { format!("{commit}-dirty") } else { commit }
        }
        _ => "no-git".to_string(),
    };
    println!("cargo:rustc-env=SPHRAGIS_GIT={described}");
}
