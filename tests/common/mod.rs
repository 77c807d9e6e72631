//! What several integration tests share: where the team's real data is.

use std::path::{Path, PathBuf};

/// The team's shared folder: `$SPHRAGIS_SHARED` (CI sets it) or `../shared` beside the
/// repository. Tests that read it are `#[ignore]`d; CI runs them.
pub fn shared() -> PathBuf {
    std::env::var_os("SPHRAGIS_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}
