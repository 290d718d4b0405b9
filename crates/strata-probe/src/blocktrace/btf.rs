//! Where a kernel structure's members lie, from the kernel's own type
//! information (BTF, `/sys/kernel/btf/vmlinux`): the block tracer reads a
//! request's device, sector and operation at the offsets this kernel has,
//! not at offsets compiled in.
//!
//! For: the byte offset of a named member of a named struct, through
//! anonymous unions and structs; the id of a named typedef (a BTF-typed
//! tracepoint's, `btf_trace_<name>`, which a program is loaded against).
//! Not for: anything else BTF says.

use anyhow::{bail, Context, Result};

const MAGIC: u16 = 0xeb9f;
const KIND_STRUCT: u32 = 4;
const KIND_UNION: u32 = 5;
const KIND_TYPEDEF: u32 = 8;

/// One type's entry: where it starts, its kind, its member count, and for
/// structs and unions where its members start.
struct Entry {
    name_off: u32,
    kind: u32,
    vlen: usize,
    kind_flag: bool,
    /// The byte where its extra data (members) starts.
    extra: usize,
}

/// The types of a BTF blob, by id (id 0 is void).
pub struct Btf {
    bytes: Vec<u8>,
    strings: std::ops::Range<usize>,
    entries: Vec<Entry>,
}

impl Btf {
    /// The running kernel's types.
    pub fn of_the_kernel() -> Result<Btf> {
        let path = "/sys/kernel/btf/vmlinux";
        let bytes = std::fs::read(path)
            .with_context(|| format!("reading {path} (a kernel built without BTF)"))?;
        Btf::parse(bytes)
    }

    pub fn parse(bytes: Vec<u8>) -> Result<Btf> {
        let u32_at = |at: usize| -> Result<u32> {
            let slice = bytes.get(at..at + 4).context("BTF cut short")?;
            Ok(u32::from_le_bytes(slice.try_into()?))
        };
        if bytes.len() < 24 || u16::from_le_bytes([bytes[0], bytes[1]]) != MAGIC {
            bail!("not little-endian BTF");
        }
        let header_len = u32_at(4)? as usize;
        let (type_off, type_len) = (u32_at(8)? as usize, u32_at(12)? as usize);
        let (str_off, str_len) = (u32_at(16)? as usize, u32_at(20)? as usize);
        let types = header_len + type_off..header_len + type_off + type_len;
        let strings = header_len + str_off..header_len + str_off + str_len;
        if types.end > bytes.len() || strings.end > bytes.len() {
            bail!("BTF sections beyond its end");
        }
        let mut entries = vec![Entry {
            name_off: 0,
            kind: 0,
            vlen: 0,
            kind_flag: false,
            extra: 0,
        }];
        let mut at = types.start;
        while at < types.end {
            let name_off = u32_at(at)?;
            let info = u32_at(at + 4)?;
            let (kind, vlen) = ((info >> 24) & 0x1f, (info & 0xffff) as usize);
            let extra = at + 12;
            at = extra + extra_len(kind, vlen)?;
            entries.push(Entry {
                name_off,
                kind,
                vlen,
                kind_flag: info >> 31 == 1,
                extra,
            });
        }
        Ok(Btf {
            bytes,
            strings,
            entries,
        })
    }

    fn u32_at(&self, at: usize) -> u32 {
        self.bytes.get(at..at + 4).map_or(0, |slice| {
            u32::from_le_bytes([slice[0], slice[1], slice[2], slice[3]])
        })
    }

    fn name(&self, offset: u32) -> &str {
        let start = self.strings.start + offset as usize;
        let rest = self.bytes.get(start..self.strings.end).unwrap_or_default();
        let end = rest
            .iter()
            .position(|byte| *byte == 0)
            .unwrap_or(rest.len());
        std::str::from_utf8(&rest[..end]).unwrap_or("")
    }

    /// The byte offset of `member` in `struct name`.
    pub fn member_offset(&self, name: &str, member: &str) -> Result<usize> {
        let id = (1..self.entries.len())
            .find(|id| {
                let entry = &self.entries[*id];
                entry.kind == KIND_STRUCT && entry.vlen > 0 && self.name(entry.name_off) == name
            })
            .with_context(|| format!("the kernel's BTF has no struct {name}"))?;
        let bits = self
            .find_member(id, member)
            .with_context(|| format!("struct {name} has no member {member} in this kernel"))?;
        Ok(bits / 8)
    }

    /// The id of `typedef name`.
    pub fn typedef_id(&self, name: &str) -> Result<u32> {
        let id = (1..self.entries.len())
            .find(|id| {
                let entry = &self.entries[*id];
                entry.kind == KIND_TYPEDEF && self.name(entry.name_off) == name
            })
            .with_context(|| format!("the kernel's BTF has no typedef {name}"))?;
        Ok(u32::try_from(id)?)
    }

    /// The bit offset of `member` in the struct or union `id`, looking
    /// into its anonymous members.
    fn find_member(&self, id: usize, member: &str) -> Option<usize> {
        let entry = self.entries.get(id)?;
        for index in 0..entry.vlen {
            let at = entry.extra + index * 12;
            let (name_off, type_id, offset) =
                (self.u32_at(at), self.u32_at(at + 4), self.u32_at(at + 8));
            let bits = match entry.kind_flag {
                true => offset & 0x00ff_ffff,
                false => offset,
            } as usize;
            if name_off != 0 && self.name(name_off) == member {
                return Some(bits);
            }
            let inner = self.entries.get(type_id as usize)?;
            if name_off == 0 && matches!(inner.kind, KIND_STRUCT | KIND_UNION) {
                if let Some(found) = self.find_member(type_id as usize, member) {
                    return Some(bits + found);
                }
            }
        }
        None
    }
}

/// Bytes of extra data after a type's 12-byte entry, by kind.
fn extra_len(kind: u32, vlen: usize) -> Result<usize> {
    Ok(match kind {
        1 | 14 | 17 => 4,
        2 | 7..=12 | 16 | 18 => 0,
        3 => 12,
        4 | 5 | 15 | 19 => vlen * 12,
        6 | 13 => vlen * 8,
        _ => bail!("BTF type kind {kind} unknown to strata"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_kernels_request_has_its_sector_operation_and_queue() {
        let btf = Btf::of_the_kernel().unwrap();
        let queue = btf.member_offset("request", "q").unwrap();
        let flags = btf.member_offset("request", "cmd_flags").unwrap();
        let sector = btf.member_offset("request", "__sector").unwrap();
        assert_eq!(queue, 0, "the request's queue comes first");
        assert!(queue < flags && flags < sector, "{queue} {flags} {sector}");
        assert!(btf.member_offset("gendisk", "major").is_ok());
        assert!(btf.member_offset("request", "no_such_member").is_err());
        assert!(btf.member_offset("no_such_struct", "q").is_err());
        assert!(btf.typedef_id("btf_trace_block_io_done").unwrap() > 0);
        assert!(btf.typedef_id("no_such_typedef").is_err());
    }
}
