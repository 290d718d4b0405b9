//! The few parts of Linux's BPF interface the block tracer needs, written
//! in Rust against the kernel's ABI: maps, programs built instruction by
//! instruction, and their attachment to BTF-typed raw tracepoints.
//!
//! For: a program strata assembles itself (no compiler, no object file:
//! a fresh machine has gcc but no clang). Not for: reading BTF (`btf`), or
//! any program type but BTF-typed raw tracepoints.

use anyhow::{bail, Context, Result};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const BPF_MAP_CREATE: i64 = 0;
const BPF_MAP_LOOKUP_ELEM: i64 = 1;
const BPF_MAP_UPDATE_ELEM: i64 = 2;
const BPF_MAP_DELETE_ELEM: i64 = 3;
const BPF_MAP_GET_NEXT_KEY: i64 = 4;
const BPF_PROG_LOAD: i64 = 5;
/// How often a program is loaded when the verifier was interrupted.
const PROG_LOAD_ATTEMPTS: usize = 5;
const BPF_OBJ_GET_INFO_BY_FD: i64 = 15;
const BPF_RAW_TRACEPOINT_OPEN: i64 = 17;
const BPF_MAP_LOOKUP_BATCH: i64 = 24;

/// Entries a batched read asks for at once, and the most bytes of values
/// it asks for (a per-CPU map's value is every CPU's).
const BATCH_ENTRIES: usize = 4096;
const BATCH_VALUE_BYTES: usize = 1 << 20;

pub const MAP_TYPE_HASH: u32 = 1;
pub const MAP_TYPE_ARRAY: u32 = 2;
/// A hash map with a value per CPU: a program adds to its own CPU's, with
/// no atomic instruction and no cache line shared between CPUs.
pub const MAP_TYPE_PERCPU_HASH: u32 = 5;
/// An array map with a value per CPU.
pub const MAP_TYPE_PERCPU_ARRAY: u32 = 6;
/// `BPF_F_NO_PREALLOC`: a hash map's entries allocated as they are made,
/// so a per-CPU map's memory grows with the entries used, not its bound.
pub const NO_PREALLOC: u32 = 1;
/// A hash map that evicts its least recently used entries when full.
pub const MAP_TYPE_LRU_HASH: u32 = 9;
const PROG_TYPE_TRACING: u32 = 26;
const TRACE_RAW_TP: u32 = 23;

/// One instruction, as the kernel reads it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Insn {
    pub code: u8,
    /// Destination register in the low four bits, source in the high four.
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

/// Registers: r0 the return value, r1–r5 a call's arguments (lost by the
/// call), r6–r9 kept across calls, r10 the frame pointer (read-only).
pub type Reg = u8;

/// Sizes of a load or store.
#[derive(Clone, Copy, Debug)]
pub enum Size {
    B = 0x10,
    H = 0x08,
    W = 0x00,
    DW = 0x18,
}

/// 64-bit arithmetic operations.
#[derive(Clone, Copy, Debug)]
pub enum Alu {
    Add = 0x00,
    Sub = 0x10,
    Mul = 0x20,
    Or = 0x40,
    And = 0x50,
    Lsh = 0x60,
    Rsh = 0x70,
    Mov = 0xb0,
}

/// Conditional jumps (unsigned comparisons).
#[derive(Clone, Copy, Debug)]
pub enum Cond {
    Eq = 0x10,
    Ge = 0x30,
    Ne = 0x50,
    Lt = 0xa0,
}

/// Kernel helpers the programs call.
#[derive(Clone, Copy, Debug)]
pub enum Helper {
    MapLookupElem = 1,
    MapUpdateElem = 2,
    MapDeleteElem = 3,
    KtimeGetNs = 5,
    GetCurrentPidTgid = 14,
    GetCurrentComm = 16,
    ProbeReadKernel = 113,
}

fn insn(code: u8, dst: Reg, src: Reg, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        regs: (src << 4) | (dst & 0x0f),
        off,
        imm,
    }
}

const CLASS_LDX: u8 = 0x01;
const CLASS_ST: u8 = 0x02;
const CLASS_STX: u8 = 0x03;
const CLASS_JMP: u8 = 0x05;
const CLASS_ALU64: u8 = 0x07;
const MODE_MEM: u8 = 0x60;
const MODE_ATOMIC: u8 = 0xc0;
const SOURCE_REG: u8 = 0x08;

/// A program being assembled, with labels for forward jumps.
#[derive(Default)]
pub struct Program {
    insns: Vec<Insn>,
    /// (instruction index, label) of each jump not yet resolved.
    jumps: Vec<(usize, String)>,
    labels: Vec<(String, usize)>,
}

impl Program {
    pub fn alu_imm(&mut self, op: Alu, dst: Reg, imm: i32) {
        self.insns
            .push(insn(CLASS_ALU64 | op as u8, dst, 0, 0, imm));
    }

    pub fn alu_reg(&mut self, op: Alu, dst: Reg, src: Reg) {
        self.insns
            .push(insn(CLASS_ALU64 | op as u8 | SOURCE_REG, dst, src, 0, 0));
    }

    /// `dst = *(size *)(src + off)`
    pub fn load(&mut self, size: Size, dst: Reg, src: Reg, off: i16) {
        self.insns
            .push(insn(CLASS_LDX | MODE_MEM | size as u8, dst, src, off, 0));
    }

    /// `*(size *)(dst + off) = src`
    pub fn store_reg(&mut self, size: Size, dst: Reg, off: i16, src: Reg) {
        self.insns
            .push(insn(CLASS_STX | MODE_MEM | size as u8, dst, src, off, 0));
    }

    /// `*(size *)(dst + off) = imm`
    pub fn store_imm(&mut self, size: Size, dst: Reg, off: i16, imm: i32) {
        self.insns
            .push(insn(CLASS_ST | MODE_MEM | size as u8, dst, 0, off, imm));
    }

    /// `*(u64 *)(dst + off) += src`, atomically.
    pub fn atomic_add(&mut self, dst: Reg, off: i16, src: Reg) {
        let code = CLASS_STX | MODE_ATOMIC | Size::DW as u8;
        self.insns.push(insn(code, dst, src, off, 0));
    }

    /// `src = *(u64 *)(dst + off); *(u64 *)(dst + off) += src`, atomically
    /// (Linux 5.12 and later).
    pub fn atomic_fetch_add(&mut self, dst: Reg, off: i16, src: Reg) {
        const FETCH: i32 = 0x01;
        let code = CLASS_STX | MODE_ATOMIC | Size::DW as u8;
        self.insns.push(insn(code, dst, src, off, FETCH));
    }

    /// `dst = the map whose descriptor is fd` (a 16-byte instruction).
    pub fn load_map(&mut self, dst: Reg, map: &Map) {
        const PSEUDO_MAP_FD: Reg = 1;
        let fd = map.fd.as_raw_fd();
        self.insns.push(insn(0x18, dst, PSEUDO_MAP_FD, 0, fd));
        self.insns.push(Insn::default());
    }

    pub fn call(&mut self, helper: Helper) {
        self.insns
            .push(insn(CLASS_JMP | 0x80, 0, 0, 0, helper as i32));
    }

    pub fn exit(&mut self) {
        self.insns.push(insn(CLASS_JMP | 0x90, 0, 0, 0, 0));
    }

    /// `if dst <cond> imm goto label`
    pub fn jump_imm(&mut self, cond: Cond, dst: Reg, imm: i32, label: &str) {
        self.jumps.push((self.insns.len(), label.to_string()));
        self.insns
            .push(insn(CLASS_JMP | cond as u8, dst, 0, 0, imm));
    }

    /// `if dst <cond> src goto label`
    pub fn jump_reg(&mut self, cond: Cond, dst: Reg, src: Reg, label: &str) {
        self.jumps.push((self.insns.len(), label.to_string()));
        self.insns
            .push(insn(CLASS_JMP | cond as u8 | SOURCE_REG, dst, src, 0, 0));
    }

    pub fn jump(&mut self, label: &str) {
        self.jumps.push((self.insns.len(), label.to_string()));
        self.insns.push(insn(CLASS_JMP, 0, 0, 0, 0));
    }

    pub fn label(&mut self, label: &str) {
        self.labels.push((label.to_string(), self.insns.len()));
    }

    /// The instructions, every jump resolved; fails on a label never set.
    pub fn finish(mut self) -> Result<Vec<Insn>> {
        for (at, label) in std::mem::take(&mut self.jumps) {
            let Some(target) = self.labels.iter().rev().find(|(name, _)| *name == label) else {
                bail!("BPF program: no label {label}");
            };
            let offset = target.1 as i64 - at as i64 - 1;
            self.insns[at].off =
                i16::try_from(offset).with_context(|| format!("jump to {label} too far"))?;
        }
        Ok(self.insns)
    }
}

fn bpf(command: i64, attr: &mut [u64]) -> i64 {
    let size = std::mem::size_of_val(attr);
    unsafe { libc::syscall(libc::SYS_bpf, command, attr.as_mut_ptr(), size) }
}

/// A BPF map, closed when dropped. A per-CPU map's value, as read, is
/// each possible CPU's in turn ([`Map::per_cpu`]).
pub struct Map {
    fd: OwnedFd,
    key_size: usize,
    /// The bytes of a value as read: a per-CPU map's are every CPU's.
    value_size: usize,
    /// One CPU's value's bytes, as laid out in a per-CPU read.
    cpu_stride: usize,
}

impl Map {
    pub fn create(map_type: u32, key_size: u32, value_size: u32, entries: u32) -> Result<Map> {
        Map::create_with(map_type, (key_size, value_size), entries, 0)
    }

    /// A map of `map_type` with (key, value) bytes `sizes`, `entries` at
    /// most, and `flags` (`NO_PREALLOC`).
    pub fn create_with(map_type: u32, sizes: (u32, u32), entries: u32, flags: u32) -> Result<Map> {
        let (key_size, value_size) = sizes;
        let mut attr = [0u64; 8];
        attr[0] = u64::from(map_type) | (u64::from(key_size) << 32);
        attr[1] = u64::from(value_size) | (u64::from(entries) << 32);
        attr[2] = u64::from(flags);
        let fd = bpf(BPF_MAP_CREATE, &mut attr);
        if fd < 0 {
            let error = std::io::Error::last_os_error();
            bail!("creating a BPF map (bpf(BPF_MAP_CREATE)): {error}");
        }
        let fd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
        let per_cpu = matches!(map_type, MAP_TYPE_PERCPU_HASH | MAP_TYPE_PERCPU_ARRAY);
        let cpu_stride = (value_size as usize).next_multiple_of(8);
        let value_size = match per_cpu {
            true => cpu_stride * possible_cpus()?,
            false => value_size as usize,
        };
        Ok(Map {
            fd,
            key_size: key_size as usize,
            value_size,
            cpu_stride,
        })
    }

    /// Each CPU's part of a value read from this map (the one value of a
    /// map that is not per-CPU).
    pub fn per_cpu<'a>(&self, value: &'a [u8]) -> impl Iterator<Item = &'a [u8]> {
        value.chunks_exact(self.cpu_stride.min(value.len().max(1)))
    }

    /// The value under `key`, when there is one.
    pub fn lookup(&self, key: &[u8]) -> Option<Vec<u8>> {
        let mut value = vec![0u8; self.value_size];
        let mut attr = [0u64; 4];
        attr[0] = self.fd.as_raw_fd() as u64;
        attr[1] = key.as_ptr() as u64;
        attr[2] = value.as_mut_ptr() as u64;
        (bpf(BPF_MAP_LOOKUP_ELEM, &mut attr) == 0).then_some(value)
    }

    /// Sets `key` to `value` (making the entry when it is new).
    pub fn update(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut attr = [0u64; 4];
        attr[0] = self.fd.as_raw_fd() as u64;
        attr[1] = key.as_ptr() as u64;
        attr[2] = value.as_ptr() as u64;
        if bpf(BPF_MAP_UPDATE_ELEM, &mut attr) != 0 {
            let error = std::io::Error::last_os_error();
            bail!("updating a BPF map (bpf(BPF_MAP_UPDATE_ELEM)): {error}");
        }
        Ok(())
    }

    /// Takes `key` out; nothing when it was not there.
    pub fn delete(&self, key: &[u8]) {
        let mut attr = [0u64; 3];
        attr[0] = self.fd.as_raw_fd() as u64;
        attr[1] = key.as_ptr() as u64;
        bpf(BPF_MAP_DELETE_ELEM, &mut attr);
    }

    /// Every key and its value.
    pub fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut entries = Vec::new();
        self.for_each(|key, value| entries.push((key.to_vec(), value.to_vec())));
        entries
    }

    /// The values (their first 8 bytes, as u64) of an array map's entries
    /// `first..first + count`: one batch where the kernel reads batches,
    /// else a lookup each.
    pub fn array_range(&self, first: u32, count: usize) -> Vec<u64> {
        let mut keys = vec![0u8; 4 * count];
        let mut values = vec![0u8; self.value_size * count];
        let previous = first.wrapping_sub(1).to_ne_bytes();
        let mut out_batch = [0u8; 8];
        let mut attr = [0u64; 7];
        attr[0] = if first == 0 {
            0
        } else {
            previous.as_ptr() as u64
        };
        attr[1] = out_batch.as_mut_ptr() as u64;
        attr[2] = keys.as_mut_ptr() as u64;
        attr[3] = values.as_mut_ptr() as u64;
        attr[4] = count as u64 | ((self.fd.as_raw_fd() as u64) << 32);
        let read_whole =
            bpf(BPF_MAP_LOOKUP_BATCH, &mut attr) == 0 && (attr[4] & 0xffff_ffff) as usize == count;
        (0..count)
            .map(|at| match read_whole {
                true => {
                    let at = at * self.value_size;
                    u64::from_ne_bytes(values[at..at + 8].try_into().unwrap_or_default())
                }
                false => self
                    .lookup(&(first + at as u32).to_ne_bytes())
                    .and_then(|value| Some(u64::from_ne_bytes(value.get(..8)?.try_into().ok()?)))
                    .unwrap_or(0),
            })
            .collect()
    }

    /// Shows `visit` every key and its value: in batches of thousands per
    /// system call (Linux 5.6 and later), else one key at a time.
    pub fn for_each(&self, mut visit: impl FnMut(&[u8], &[u8])) {
        if !self.in_batches(&mut visit) {
            for (key, value) in self.entries_one_by_one() {
                visit(&key, &value);
            }
        }
    }

    /// False, having shown nothing, where the kernel cannot read this map in
    /// batches. A failure after the first batch (the kernel's own: a fault,
    /// no memory) ends the read there.
    fn in_batches(&self, visit: &mut impl FnMut(&[u8], &[u8])) -> bool {
        // The kernel's position: a bucket index (hash) or a key (array).
        let token_size = self.key_size.max(8);
        let (mut in_batch, mut out_batch) = (vec![0u8; token_size], vec![0u8; token_size]);
        let mut capacity = (BATCH_VALUE_BYTES / self.value_size.max(1)).clamp(64, BATCH_ENTRIES);
        let (mut keys, mut values) = (Vec::new(), Vec::new());
        let mut first = true;
        loop {
            keys.resize(self.key_size * capacity, 0);
            values.resize(self.value_size * capacity, 0);
            let mut attr = [0u64; 7];
            attr[0] = if first { 0 } else { in_batch.as_ptr() as u64 };
            attr[1] = out_batch.as_mut_ptr() as u64;
            attr[2] = keys.as_mut_ptr() as u64;
            attr[3] = values.as_mut_ptr() as u64;
            attr[4] = capacity as u64 | ((self.fd.as_raw_fd() as u64) << 32);
            let failed = bpf(BPF_MAP_LOOKUP_BATCH, &mut attr) != 0;
            let error = std::io::Error::last_os_error().raw_os_error();
            let finished = failed && error == Some(libc::ENOENT);
            if failed && error == Some(libc::ENOSPC) {
                // One hash bucket holds more entries than the batch.
                capacity *= 2;
                continue;
            }
            if failed && !finished {
                return !first;
            }
            let read = (attr[4] & 0xffff_ffff) as usize;
            let pairs = keys
                .chunks_exact(self.key_size)
                .zip(values.chunks_exact(self.value_size));
            for (key, value) in pairs.take(read) {
                visit(key, value);
            }
            if finished {
                return true;
            }
            std::mem::swap(&mut in_batch, &mut out_batch);
            first = false;
        }
    }

    fn entries_one_by_one(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut entries = Vec::new();
        let mut key: Option<Vec<u8>> = None;
        loop {
            let mut next = vec![0u8; self.key_size];
            let mut attr = [0u64; 3];
            attr[0] = self.fd.as_raw_fd() as u64;
            attr[1] = key.as_ref().map_or(0, |key| key.as_ptr() as u64);
            attr[2] = next.as_mut_ptr() as u64;
            if bpf(BPF_MAP_GET_NEXT_KEY, &mut attr) != 0 {
                return entries;
            }
            if let Some(value) = self.lookup(&next) {
                entries.push((next.clone(), value));
            }
            key = Some(next);
        }
    }
}

/// The CPUs the kernel may ever bring up (`/sys/devices/system/cpu/possible`,
/// "0-15" or "0,2-3"): a per-CPU map has a value for each.
fn possible_cpus() -> Result<usize> {
    let path = "/sys/devices/system/cpu/possible";
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    let highest = text
        .trim()
        .split(',')
        .filter_map(|range| range.rsplit('-').next()?.parse::<usize>().ok())
        .max();
    highest
        .map(|cpu| cpu + 1)
        .ok_or_else(|| anyhow::anyhow!("{path} names no CPU: {text:?}"))
}

/// A loaded program, closed when dropped.
pub struct LoadedProgram {
    fd: OwnedFd,
}

impl LoadedProgram {
    /// Loads a program for the BTF-typed raw tracepoint `name` (its
    /// typedef `btf_trace_<name>` is type `btf_id` of the kernel's BTF): the
    /// verifier knows its arguments' types, so the program reads their
    /// members directly; the verifier's log is in the error.
    pub fn load_btf_tracepoint(name: &str, btf_id: u32, insns: &[Insn]) -> Result<LoadedProgram> {
        let license = c"GPL";
        let mut log = vec![0u8; 1 << 20];
        let mut attr = [0u64; 15];
        attr[0] = u64::from(PROG_TYPE_TRACING) | ((insns.len() as u64) << 32);
        attr[1] = insns.as_ptr() as u64;
        attr[2] = license.as_ptr() as u64;
        attr[3] = 1 | ((log.len() as u64) << 32);
        attr[4] = log.as_mut_ptr() as u64;
        // prog_name: the tracepoint's, as `bpftool prog` shows it.
        let mut program_name = [0u8; 16];
        for (into, byte) in program_name.iter_mut().zip(name.bytes().take(15)) {
            *into = byte;
        }
        attr[6] = u64::from_ne_bytes(program_name[..8].try_into()?);
        attr[7] = u64::from_ne_bytes(program_name[8..].try_into()?);
        attr[8] = u64::from(TRACE_RAW_TP) << 32;
        attr[13] = u64::from(btf_id) << 32;
        // The verifier gives up with EAGAIN when a signal comes to the
        // loading thread while it runs (a child's SIGCHLD, say): loaded
        // again, as libbpf does (PROG_LOAD_ATTEMPTS).
        let mut fd = bpf(BPF_PROG_LOAD, &mut attr);
        for _ in 1..PROG_LOAD_ATTEMPTS {
            let interrupted = std::io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN);
            if fd >= 0 || !interrupted {
                break;
            }
            fd = bpf(BPF_PROG_LOAD, &mut attr);
        }
        if fd < 0 {
            let error = std::io::Error::last_os_error();
            let end = log.iter().position(|byte| *byte == 0).unwrap_or(log.len());
            let verifier = String::from_utf8_lossy(&log[..end]);
            let last: Vec<&str> = verifier.lines().rev().take(12).collect();
            let last: Vec<&str> = last.into_iter().rev().collect();
            bail!(
                "loading the BPF program {name}: {error}; the verifier said: {}",
                last.join(" | ")
            );
        }
        Ok(LoadedProgram {
            fd: unsafe { OwnedFd::from_raw_fd(fd as RawFd) },
        })
    }
}

impl LoadedProgram {
    /// Times the kernel skipped this program because a BPF program was
    /// already running on that CPU (`bpf_prog_info.recursion_misses`,
    /// Linux 5.12 and later); `None` where the kernel does not say.
    pub fn recursion_misses(&self) -> Option<u64> {
        const RECURSION_MISSES_OFFSET: usize = 208;
        let mut info = [0u8; 256];
        let mut attr = [0u64; 2];
        attr[0] = self.fd.as_raw_fd() as u64 | ((info.len() as u64) << 32);
        attr[1] = info.as_mut_ptr() as u64;
        if bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr) != 0 {
            return None;
        }
        let returned_len = (attr[0] >> 32) as usize;
        let end = RECURSION_MISSES_OFFSET + 8;
        (returned_len >= end).then(|| {
            let bytes = &info[RECURSION_MISSES_OFFSET..end];
            u64::from_ne_bytes(bytes.try_into().unwrap_or_default())
        })
    }
}

/// A program attached to a tracepoint; detached when dropped.
pub struct Attachment {
    _link: OwnedFd,
    program: LoadedProgram,
}

impl Attachment {
    pub fn program(&self) -> &LoadedProgram {
        &self.program
    }
}

/// Attaches `program`, loaded for the raw tracepoint `name` (its
/// arguments are the tracepoint's own: a `struct request *` for the block
/// ones). The kernel keeps a raw tracepoint's program from nesting only in
/// itself, where a tracepoint's is kept from running inside any other BPF
/// program.
pub fn attach_raw(program: LoadedProgram, name: &str) -> Result<Attachment> {
    let mut attr = [0u64; 2];
    attr[1] = program.fd.as_raw_fd() as u64;
    let fd = bpf(BPF_RAW_TRACEPOINT_OPEN, &mut attr);
    if fd < 0 {
        let error = std::io::Error::last_os_error();
        bail!("attaching to the raw tracepoint {name}: {error} (Linux 6.5 and later have the block_io_start and block_io_done tracepoints)");
    }
    Ok(Attachment {
        _link: unsafe { OwnedFd::from_raw_fd(fd as RawFd) },
        program,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_encoded_as_the_kernel_reads_them() {
        let mut program = Program::default();
        program.alu_imm(Alu::Mov, 0, 0);
        program.jump_imm(Cond::Eq, 1, 0, "out");
        program.load(Size::W, 2, 1, 8);
        program.atomic_add(0, 0, 1);
        program.label("out");
        program.exit();
        let insns = program.finish().unwrap();
        assert_eq!(
            insns[0],
            Insn {
                code: 0xb7,
                regs: 0x00,
                off: 0,
                imm: 0
            }
        );
        assert_eq!(
            insns[1],
            Insn {
                code: 0x15,
                regs: 0x01,
                off: 2,
                imm: 0
            }
        );
        assert_eq!(
            insns[2],
            Insn {
                code: 0x61,
                regs: 0x12,
                off: 8,
                imm: 0
            }
        );
        assert_eq!(
            insns[3],
            Insn {
                code: 0xdb,
                regs: 0x10,
                off: 0,
                imm: 0
            }
        );
        assert_eq!(
            insns[4],
            Insn {
                code: 0x95,
                regs: 0x00,
                off: 0,
                imm: 0
            }
        );
    }

    #[test]
    fn a_jump_to_no_label_is_refused() {
        let mut program = Program::default();
        program.jump("nowhere");
        assert!(program.finish().is_err());
    }

    /// Both ways of reading a map, each entry once: sorted pairs.
    fn read_both_ways(map: &Map) -> [Vec<(Vec<u8>, Vec<u8>)>; 2] {
        let mut batched = Vec::new();
        assert!(map.in_batches(&mut |key: &[u8], value: &[u8]| {
            batched.push((key.to_vec(), value.to_vec()))
        }));
        let mut one_by_one = map.entries_one_by_one();
        batched.sort();
        one_by_one.sort();
        [batched, one_by_one]
    }

    #[test]
    fn a_map_is_read_whole_in_batches_as_one_key_at_a_time() {
        // More entries than two batches, and a partly filled array.
        let hash = Map::create(MAP_TYPE_HASH, 8, 16, 20_000).expect("root: BPF maps");
        for key in 0..9_001u64 {
            let value = [key.to_ne_bytes(), (key * 3).to_ne_bytes()].concat();
            hash.update(&(key * 7).to_ne_bytes(), &value).unwrap();
        }
        let [batched, one_by_one] = read_both_ways(&hash);
        assert_eq!(batched.len(), 9_001);
        assert_eq!(batched, one_by_one);
        let last = [9_000u64.to_ne_bytes(), 27_000u64.to_ne_bytes()].concat();
        assert!(batched.contains(&(63_000u64.to_ne_bytes().to_vec(), last)));
        let array = Map::create(MAP_TYPE_ARRAY, 4, 8, 5_000).unwrap();
        array
            .update(&4_999u32.to_ne_bytes(), &42u64.to_ne_bytes())
            .unwrap();
        let [batched, one_by_one] = read_both_ways(&array);
        assert_eq!(batched.len(), 5_000, "an array has every slot");
        assert_eq!(batched, one_by_one);
        let slot = (
            4_999u32.to_ne_bytes().to_vec(),
            42u64.to_ne_bytes().to_vec(),
        );
        assert!(batched.contains(&slot));
        let empty = Map::create(MAP_TYPE_HASH, 8, 8, 16).unwrap();
        assert_eq!(read_both_ways(&empty)[0], []);
    }
}
