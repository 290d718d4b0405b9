//! Checking, from the file itself, that a table set holds one row per page:
//! SQLite's `dbstat` virtual table (built into the bundled library) lists
//! every page of every b-tree with its type and cell count.
//!
//! Not for: loading (`setup`); the check reads every page of the table.

use crate::connection::open_read_only;
use crate::schema::{table_sets, TableSet};
use rusqlite::Connection;
use serde::Serialize;
use std::path::Path;
use strata_slob::schema::SchemaPlan;

/// The pages of one table set, as `dbstat` counts them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PageLayout {
    pub schema: String,
    /// Rows of the `slob` table (cells of its leaf pages).
    pub rows: u64,
    pub leaf_pages: u64,
    /// Pages above the leaves, which only route a lookup to its leaf.
    pub interior_pages: u64,
    /// Pages holding the end of a row too large for its page: must be 0.
    pub overflow_pages: u64,
    /// Pages of the key index.
    pub index_pages: u64,
    /// Pages of the scan table (all kinds).
    pub scan_pages: u64,
    /// Bytes of all the set's pages.
    pub bytes_on_disk: u64,
    /// Every row alone on its leaf page, none spilling to overflow pages.
    pub one_row_per_page: bool,
}

/// The layout of every table set of `plan` in the file at `path`.
pub fn check_layout(path: &Path, plan: &SchemaPlan) -> anyhow::Result<Vec<PageLayout>> {
    let connection = open_read_only(path)?;
    table_sets(plan)
        .iter()
        .map(|set| layout_of(&connection, set))
        .collect()
}

pub(crate) fn layout_of(connection: &Connection, set: &TableSet) -> anyhow::Result<PageLayout> {
    let mut statement = connection.prepare(
        "SELECT name, pagetype, count(*), sum(ncell), sum(pgsize) FROM dbstat \
         WHERE name IN (?1, ?2, ?3) GROUP BY name, pagetype",
    )?;
    let mut rows = statement.query([&set.slob, &set.key_index, &set.scan])?;
    let mut layout = PageLayout {
        schema: set.schema.clone(),
        ..PageLayout::default()
    };
    while let Some(row) = rows.next()? {
        let (name, page_type): (String, String) = (row.get(0)?, row.get(1)?);
        let (pages, cells, bytes): (i64, i64, i64) = (row.get(2)?, row.get(3)?, row.get(4)?);
        let pages = pages as u64;
        layout.bytes_on_disk += bytes as u64;
        match (name == set.slob, page_type.as_str()) {
            (true, "leaf") => {
                layout.leaf_pages = pages;
                layout.rows = cells as u64;
            }
            (true, "internal") => layout.interior_pages = pages,
            (true, _) => layout.overflow_pages += pages,
            (false, _) if name == set.key_index => layout.index_pages += pages,
            (false, _) => layout.scan_pages += pages,
        }
    }
    layout.one_row_per_page = layout.overflow_pages == 0 && layout.rows == layout.leaf_pages;
    Ok(layout)
}
