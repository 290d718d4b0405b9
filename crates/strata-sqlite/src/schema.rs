//! What a SLOB data set is in one SQLite file: SQLite has no schemas, so
//! each of the plan's schemas becomes a set of tables named after it
//! (`strata_slob_1`, its index `strata_slob_1_key`, its scan table
//! `strata_slob_1_scan`), the row shape that fills exactly one page, and
//! strata's record of what it created (`strata_slob_meta`).
//!
//! Not for: writing rows (`setup`) or running sessions (`session`).

use strata_slob::schema::{schema_names, SchemaPlan};

/// strata's record of the table sets it made: one row per set, with
/// `completed_at` NULL until the load finished (the completion marker).
pub const META_TABLE: &str = "strata_slob_meta";

/// The page size of a file strata creates: 8 KiB, so that the plan's
/// blocks are the same bytes as on PostgreSQL. An existing file keeps its
/// own page size.
pub const DEFAULT_PAGE_BYTES: u32 = 8192;

/// Bytes of a page's usable space that a row leaves unused: the record
/// header (at most 8 bytes here), `key` and `n` (at most 8 bytes each as
/// `n` grows with updates) and margin. A table leaf cell keeps at most
/// usable − 35 payload bytes on its page (more spills to overflow pages),
/// and two rows of usable − 64 bytes never share a page.
pub const ROW_SLACK_BYTES: u32 = 64;

/// The tables of one of the plan's schemas.
#[derive(Clone, Debug, PartialEq)]
pub struct TableSet {
    /// The plan's schema name, which is also the `slob` table's name.
    pub schema: String,
    pub slob: String,
    pub key_index: String,
    pub scan: String,
}

impl TableSet {
    pub fn named(schema: &str) -> TableSet {
        TableSet {
            schema: schema.to_string(),
            slob: schema.to_string(),
            key_index: format!("{schema}_key"),
            scan: format!("{schema}_scan"),
        }
    }
}

/// The plan's table sets, in the order of its schemas.
pub fn table_sets(plan: &SchemaPlan) -> Vec<TableSet> {
    schema_names(plan)
        .iter()
        .map(|schema| TableSet::named(schema))
        .collect()
}

/// Bytes of `pad` in every row of a file whose pages have
/// `usable_page_bytes` usable bytes (page size less reserved bytes).
pub fn pad_bytes(usable_page_bytes: u32) -> usize {
    usable_page_bytes.saturating_sub(ROW_SLACK_BYTES) as usize
}

/// A quoted SQLite identifier.
pub fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A SLOB table: `id` is the rowid, so rows are stored in `id` order and
/// one row takes one leaf page; `key` is the shuffled key sessions look up.
pub(crate) fn create_table_sql(table: &str) -> String {
    format!(
        "CREATE TABLE {} (id INTEGER PRIMARY KEY, key INTEGER NOT NULL, \
         n INTEGER NOT NULL, pad BLOB NOT NULL)",
        quote(table)
    )
}

pub(crate) fn create_index_sql(set: &TableSet) -> String {
    format!(
        "CREATE INDEX {} ON {} (key)",
        quote(&set.key_index),
        quote(&set.slob)
    )
}

pub(crate) fn create_meta_sql() -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {META_TABLE} (schema_name TEXT PRIMARY KEY, \
         rows INTEGER NOT NULL, scan_rows INTEGER NOT NULL, page_bytes INTEGER NOT NULL, \
         random_data INTEGER NOT NULL, created_at TEXT NOT NULL, completed_at TEXT)"
    )
}

/// The statements of a session, for one table set. `INDEXED BY` makes
/// SQLite read through the key index or fail, never scan the table.
#[derive(Clone, Debug)]
pub(crate) struct SessionSql {
    pub select: String,
    pub update: String,
    pub scan: String,
}

impl SessionSql {
    pub(crate) fn of(schema: &str) -> SessionSql {
        let set = TableSet::named(schema);
        let (slob, index) = (quote(&set.slob), quote(&set.key_index));
        SessionSql {
            select: format!(
                "SELECT coalesce(sum(n), 0), count(*) FROM {slob} INDEXED BY {index} \
                 WHERE key BETWEEN ?1 AND ?2"
            ),
            update: format!(
                "UPDATE {slob} INDEXED BY {index} SET n = n + 1 WHERE key BETWEEN ?1 AND ?2"
            ),
            scan: format!(
                "SELECT count(*), coalesce(sum(n), 0) FROM {}",
                quote(&set.scan)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_fits_one_page_and_two_do_not() {
        for page_bytes in [512u32, 1024, 4096, 8192, 65536] {
            let pad = pad_bytes(page_bytes) as u32;
            let largest_payload = pad + 8 + 8 + 8;
            assert!(largest_payload <= page_bytes - 35, "{page_bytes}");
            let smallest_cell = pad + 4;
            assert!(2 * smallest_cell > page_bytes - 8, "{page_bytes}");
        }
    }
}
