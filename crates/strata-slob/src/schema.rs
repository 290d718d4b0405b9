//! What a SLOB data set is, whatever the engine: the plan (how many
//! schemas, how big), the names strata gives the schemas, and the shuffle
//! that keeps key order apart from block order.
//!
//! Not for: an engine's table shape or loading (each engine's crate), or
//! running sessions (`session`).

use serde::Serialize;

/// The unit of a plan and of pgio.conf sizes: PostgreSQL's 8 KiB block.
pub const BLOCK_BYTES: u64 = 8192;

/// A table's size as given: bytes on disk, or a count of the engine's blocks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TableSize {
    Bytes(u64),
    Blocks(u64),
}

impl TableSize {
    /// Rows of one block each for an engine whose blocks are `block_bytes`.
    pub fn blocks(self, block_bytes: u32) -> u64 {
        match self {
            TableSize::Bytes(bytes) => (bytes / u64::from(block_bytes)).max(1),
            TableSize::Blocks(blocks) => blocks,
        }
    }
}

/// The size of a SLOB data set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchemaPlan {
    /// Number of schemas `strata_slob_1..N`; ignored with `single_schema`.
    pub schemas: u32,
    /// One shared schema `strata_slob` for all sessions.
    pub single_schema: bool,
    /// Rows (and so 8 KiB heap blocks) of each schema's `slob` table.
    pub blocks_per_schema: u64,
    /// Blocks of each schema's `scan` table; 0 for none.
    pub scan_table_blocks: u64,
    /// Random (incompressible) `pad` bytes instead of a repeated pattern.
    pub random_data: bool,
}

/// The names of the plan's schemas, in order: sessions of schema 1 use the
/// first.
pub fn schema_names(plan: &SchemaPlan) -> Vec<String> {
    if plan.single_schema {
        vec!["strata_slob".to_string()]
    } else {
        (1..=plan.schemas)
            .map(|number| format!("strata_slob_{number}"))
            .collect()
    }
}

pub fn validate_plan(plan: &SchemaPlan) -> anyhow::Result<()> {
    anyhow::ensure!(
        plan.single_schema || plan.schemas >= 1,
        "the plan has no schemas: ask for at least one"
    );
    anyhow::ensure!(
        plan.blocks_per_schema >= 1,
        "the plan has 0 blocks per schema: ask for at least one block"
    );
    anyhow::ensure!(
        i64::try_from(plan.blocks_per_schema).is_ok(),
        "{} blocks per schema is more than PostgreSQL can key",
        plan.blocks_per_schema
    );
    Ok(())
}

/// A bijection from row numbers `0..rows` to keys `1..=rows` that looks
/// random: a 4-round Feistel network over the smallest even power of two
/// that covers `rows`, with cycle walking back into range. Consecutive keys
/// land in unrelated blocks with no constant stride a storage prefetcher
/// could learn.
#[derive(Clone, Debug)]
pub struct KeyShuffle {
    rows: u64,
    half_bits: u32,
    half_mask: u64,
    round_keys: [u64; 4],
}

impl KeyShuffle {
    pub fn new(rows: u64, seed: u64) -> Self {
        let bits_needed = 64 - rows.saturating_sub(1).leading_zeros();
        let half_bits = bits_needed.div_ceil(2).max(1);
        let mut round_keys = [0u64; 4];
        let mut state = seed;
        for round_key in &mut round_keys {
            state = mix64(state.wrapping_add(0x9E37_79B9_7F4A_7C15));
            *round_key = state;
        }
        KeyShuffle {
            rows,
            half_bits,
            half_mask: (1u64 << half_bits) - 1,
            round_keys,
        }
    }

    /// The key (1-based) of row number `row` (0-based, `row < rows`).
    pub fn key_of_row(&self, row: u64) -> u64 {
        debug_assert!(row < self.rows);
        let mut value = row;
        loop {
            value = self.permute(value);
            if value < self.rows {
                return value + 1;
            }
        }
    }

    fn permute(&self, value: u64) -> u64 {
        let mut left = value >> self.half_bits;
        let mut right = value & self.half_mask;
        for round_key in self.round_keys {
            let next_right = left ^ (mix64(right ^ round_key) & self.half_mask);
            left = right;
            right = next_right;
        }
        (left << self.half_bits) | right
    }
}

fn mix64(mut value: u64) -> u64 {
    value = (value ^ (value >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    value ^ (value >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(schemas: u32, single_schema: bool) -> SchemaPlan {
        SchemaPlan {
            schemas,
            single_schema,
            blocks_per_schema: 10,
            scan_table_blocks: 0,
            random_data: true,
        }
    }

    #[test]
    fn names_number_the_schemas_or_name_the_single_one() {
        assert_eq!(
            schema_names(&plan(3, false)),
            ["strata_slob_1", "strata_slob_2", "strata_slob_3"]
        );
        assert_eq!(schema_names(&plan(3, true)), ["strata_slob"]);
    }

    #[test]
    fn shuffle_is_a_permutation_for_awkward_sizes() {
        for rows in [1u64, 2, 3, 7, 255, 256, 257, 1000, 4099] {
            let shuffle = KeyShuffle::new(rows, rows * 31);
            let mut seen = vec![false; rows as usize];
            for row in 0..rows {
                let key = shuffle.key_of_row(row);
                assert!((1..=rows).contains(&key), "{rows}: key {key}");
                assert!(!seen[(key - 1) as usize], "{rows}: key {key} twice");
                seen[(key - 1) as usize] = true;
            }
        }
    }

    #[test]
    fn shuffled_keys_do_not_follow_row_order() {
        let rows = 10_000u64;
        let shuffle = KeyShuffle::new(rows, 7);
        let in_order = (1..rows)
            .filter(|&row| shuffle.key_of_row(row) > shuffle.key_of_row(row - 1))
            .count();
        let share_ascending = in_order as f64 / rows as f64;
        assert!((0.4..0.6).contains(&share_ascending), "{share_ascending}");
    }
}
