//! The relation a block request outlier read or wrote: its first sector on
//! the data directory's disk mapped to a file (`strata_probe::extents`),
//! the file to PostgreSQL's relation by its file node
//! (`pg_filenode_relation`), at the window's end.
//!
//! Not for: tracing or listing the outliers
//! (`strata_probe::blocktrace::shared`); the query a backend ran (it is
//! not known at the moment of the request, only at the edges).

use std::collections::BTreeMap;
use std::path::Path;
use strata_probe::extents::FileMap;
use strata_recording::run::BlockTraceFigures;

/// Names the file, offset and relation of each listed outlier on the data
/// directory's disk, where the map and the database can say.
pub async fn name(
    client: &tokio_postgres::Client,
    data_directory: &Path,
    traced: &mut BlockTraceFigures,
) {
    let Some(outliers) = traced.outliers.as_mut().filter(|o| !o.listed.is_empty()) else {
        return;
    };
    let Some(map) = FileMap::of(data_directory) else {
        return;
    };
    let database_oid = current_database_oid(client).await;
    let mut relations: BTreeMap<String, Option<String>> = BTreeMap::new();
    for outlier in outliers
        .listed
        .iter_mut()
        .filter(|outlier| outlier.device == map.disk)
    {
        let Some((file, offset)) = map.file_at(outlier.sector * 512) else {
            continue;
        };
        let relative = file.strip_prefix(data_directory).unwrap_or(file);
        let relative = relative.display().to_string();
        if !relations.contains_key(&relative) {
            let relation = relation_of(client, &relative, database_oid).await;
            relations.insert(relative.clone(), relation);
        }
        outlier.relation = relations[&relative].clone();
        outlier.file = Some(relative);
        outlier.file_offset_bytes = Some(offset);
    }
}

async fn current_database_oid(client: &tokio_postgres::Client) -> Option<u32> {
    let row = client
        .query_one(
            "SELECT oid FROM pg_database WHERE datname = current_database()",
            &[],
        )
        .await
        .ok()?;
    row.try_get(0).ok()
}

/// A data file's relation: `base/DBOID/FILENODE[_FORK][.SEGMENT]` of this
/// database, or `global/FILENODE`; `None` for another database's file or
/// one PostgreSQL does not know (yet, or any more).
async fn relation_of(
    client: &tokio_postgres::Client,
    relative: &str,
    database_oid: Option<u32>,
) -> Option<String> {
    let (filenode, fork) = file_node(relative, database_oid)?;
    let row = client
        .query_opt(
            "SELECT n.nspname || '.' || c.relname FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.oid = pg_filenode_relation(0, $1)",
            &[&filenode],
        )
        .await
        .ok()??;
    let name: String = row.try_get(0).ok()?;
    Some(match fork {
        "" => name,
        fork => format!("{name} ({fork} fork)"),
    })
}

/// The file node and fork (`fsm`, `vm`, `init`, "" for main) of a data
/// file of this database (or a shared one).
fn file_node(relative: &str, database_oid: Option<u32>) -> Option<(u32, &str)> {
    let mut parts = relative.split('/');
    let name = match (parts.next()?, parts.next()?, parts.next()) {
        ("base", database, Some(name)) if database.parse::<u32>().ok() == database_oid => name,
        ("global", name, None) => name,
        _ => return None,
    };
    let name = name.split('.').next()?;
    let (node, fork) = name.split_once('_').unwrap_or((name, ""));
    Some((node.parse().ok()?, fork))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_files_path_gives_its_file_node_and_fork() {
        let oid = Some(16384);
        assert_eq!(file_node("base/16384/16390", oid), Some((16390, "")));
        assert_eq!(file_node("base/16384/16390.2", oid), Some((16390, "")));
        assert_eq!(file_node("base/16384/16390_fsm", oid), Some((16390, "fsm")));
        assert_eq!(file_node("global/1262", oid), Some((1262, "")));
        assert_eq!(file_node("base/5/16390", oid), None, "another database's");
        assert_eq!(file_node("pg_wal/000000010000000000000001", oid), None);
    }
}
