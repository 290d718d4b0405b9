//! What a SLOB data set is on InnoDB: the database and table names, the row
//! that makes exactly one row live in each page, and strata's meta table
//! (its record of what it created, and the completion marker of each load).
//!
//! One row per page: InnoDB refuses a row larger than about half a page
//! (8,126 bytes of 16 KiB), so two rows of any legal size share a page. A
//! row of 7/16 of a page fits twice but not three times, so rows inserted
//! in ascending `id` order fill each leaf page with exactly two. The loader
//! inserts a filler row (negative `key`) after every real row and deletes
//! the fillers once the table is loaded; the table's `MERGE_THRESHOLD=1`
//! keeps purge from merging the half-empty pages back together, so every
//! leaf page ends up holding one live row. `id` (the clustered index) is the
//! load order; `key` is the shuffled SLOB key with a secondary index, so a
//! select reads the secondary index (a few pages, cached) and then one
//! random clustered leaf page per key — one physical page read per key, as
//! SLOB's index range scan plus table access by rowid does on Oracle.
//!
//! Not for: loading (`setup`) or running statements (`session`).

/// The database strata creates when the URL names none.
pub const DEFAULT_DATABASE: &str = "strata_slob";

/// strata's record of the tables (and the database) it created.
pub const META_TABLE: &str = "strata_slob_meta";

/// InnoDB's default page size, the throwaway server's: one row per page,
/// so `--scale` in bytes becomes rows of this many bytes.
pub const DEFAULT_PAGE_BYTES: u32 = 16 << 10;

/// Largest page size the layout works with: on 64 KiB pages a row is
/// capped at 16 KiB, so four fit in a page.
pub const MAX_PAGE_BYTES: u32 = 32 * 1024;

/// The row's fixed columns and InnoDB's record overhead, roughly, in bytes.
const ROW_OVERHEAD_BYTES: u32 = 64;

/// Bytes of `pad` in each row on pages of `page_bytes`: the whole row is
/// 7/16 of a page, more than a third and less than half.
pub fn pad_bytes(page_bytes: u32) -> anyhow::Result<u32> {
    anyhow::ensure!(
        (4096..=MAX_PAGE_BYTES).contains(&page_bytes),
        "innodb_page_size is {page_bytes} bytes: the one-row-per-page layout needs 4 KiB to 32 KiB pages \
         (a row on 64 KiB pages is capped at 16 KiB, so several would share a page)"
    );
    Ok(page_bytes * 7 / 16 - ROW_OVERHEAD_BYTES)
}

/// The `slob` table of a plan's schema: the schema's own name, as on SQLite.
pub fn slob_table(schema: &str) -> String {
    schema.to_string()
}

/// The scan table of a plan's schema.
pub fn scan_table(schema: &str) -> String {
    format!("{schema}_scan")
}

/// The name of the secondary index on `key`.
pub const KEY_INDEX: &str = "slob_key";

pub fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// DDL of a SLOB table; `with_key_index` adds the secondary index on `key`
/// (the scan table needs none). Persistent statistics, so `ANALYZE TABLE`
/// gives the exact leaf page count the layout check reads.
pub fn create_table_sql(table: &str, pad_bytes: u32, with_key_index: bool) -> String {
    let index = match with_key_index {
        true => format!(", KEY {} (`key`)", quote_ident(KEY_INDEX)),
        false => String::new(),
    };
    format!(
        "CREATE TABLE {} (id BIGINT NOT NULL PRIMARY KEY, `key` BIGINT NOT NULL, \
         n BIGINT NOT NULL, pad VARBINARY({pad_bytes}) NOT NULL{index}) \
         ENGINE=InnoDB ROW_FORMAT=DYNAMIC STATS_PERSISTENT=1 COMMENT='MERGE_THRESHOLD=1'",
        quote_ident(table)
    )
}

/// The meta table: one `schema` row per loaded schema, and a `database`
/// row when strata created the database.
pub fn create_meta_sql() -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {META_TABLE} (kind VARCHAR(16) NOT NULL, \
         name VARCHAR(64) NOT NULL, blocks BIGINT, scan_blocks BIGINT, page_bytes INT, \
         pad_bytes INT, random_data BOOL, created_at DATETIME NOT NULL, \
         completed_at DATETIME NULL, PRIMARY KEY (kind, name)) ENGINE=InnoDB"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_rows_fit_a_page_and_three_do_not() {
        for page_bytes in [4096u32, 8192, 16384, 32768] {
            let row = pad_bytes(page_bytes).unwrap() + ROW_OVERHEAD_BYTES;
            assert!(2 * row < page_bytes - 200, "{page_bytes}");
            assert!(3 * row > page_bytes, "{page_bytes}");
        }
        assert!(pad_bytes(65536).is_err());
    }

    #[test]
    fn names_follow_the_plan_schemas() {
        assert_eq!(slob_table("strata_slob_2"), "strata_slob_2");
        assert_eq!(scan_table("strata_slob_2"), "strata_slob_2_scan");
        assert_eq!(quote_ident("a`b"), "`a``b`");
    }
}
