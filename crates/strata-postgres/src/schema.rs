//! The SQL of a SLOB data set in PostgreSQL: the table shape that puts
//! exactly one row in each 8 KiB heap page, strata's own record of the
//! schemas it made, and quoting.
//!
//! Not for: the plan and the key shuffle every engine shares
//! (`strata_slob::schema`), or loading (`load`).

/// The schema holding `loads`, strata's record of the schemas it made.
pub const META_SCHEMA: &str = "strata_slob_meta";

/// Bytes of `pad` in every row. With the tuple header (24), `key` and `n`
/// (16), the 4-byte varlena header and the line pointer, a row takes 3,948
/// bytes of a page's 8,168. With `fillfactor = 50` an insert leaves a page
/// once its free space would drop under 4,096 bytes, so exactly one row lands
/// in each block; the other half stays free so that an UPDATE writes the new
/// row version into the same block (a HOT update): updates dirty random
/// blocks in place, as SLOB intends, and the table never grows. Half of each
/// page is random data, the other half the free space updates need. `pad` is
/// `STORAGE PLAIN`: never compressed, never toasted.
pub const PAD_BYTES: usize = 3900;

/// See [`PAD_BYTES`].
pub const FILLFACTOR: u32 = 50;

/// The SQL naming `table` in `schema`, quoted.
pub fn qualified(schema: &str, table: &str) -> String {
    format!("{}.{}", quote_ident(schema), quote_ident(table))
}

pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// DDL for one SLOB table (`slob` or `scan`): no index; `pad` kept plain
/// and left out of ANALYZE (sorting 8 KB random values would only cost time).
/// ANALYZE holds its sample's rows whole in its own memory, 300 × the
/// largest statistics target of them: at the default 100, 30,000 rows of
/// 3.9 KB, 117 MiB, which an autoanalyze under `--update-pct` took inside
/// the memory cgroup's window in one second, and the OOM killer ended the
/// server (measured, 2026-11-29); at [`STATISTICS_TARGET`], 12 MiB, and a
/// uniform key needs no finer histogram.
pub fn create_table_sql(schema: &str, table: &str) -> String {
    let name = qualified(schema, table);
    format!(
        "CREATE TABLE {name} (key bigint NOT NULL, n bigint NOT NULL, pad bytea NOT NULL) \
         WITH (fillfactor = {FILLFACTOR}); \
         ALTER TABLE {name} ALTER COLUMN pad SET STORAGE PLAIN, \
         ALTER COLUMN pad SET STATISTICS 0, \
         ALTER COLUMN key SET STATISTICS {STATISTICS_TARGET}, \
         ALTER COLUMN n SET STATISTICS {STATISTICS_TARGET}"
    )
}

/// The statistics target of a SLOB table's `key` and `n` ([`create_table_sql`]).
pub const STATISTICS_TARGET: u32 = 10;
