//! `sphragis views`: the versioned views recorded in the database.

use super::CliError;
use std::path::Path;

pub fn run(db: &Path) -> Result<(), CliError> {
    let conn = crate::db::open_read_only(db)?;
    let table = crate::report::query(
        &conn,
        "select name, base_name, version, sha256, source, registered_at from sph_views order by base_name, version",
        &[],
    )?;
    print!("{}", crate::report::render_table(&table));
    Ok(())
}
