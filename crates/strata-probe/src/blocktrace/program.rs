//! The three programs of the block tracer, assembled for this kernel's
//! structure layouts: a request's start (`block_io_start`), its issue to
//! the driver (`block_rq_issue`) and its end (`block_io_done`), all raw
//! tracepoints whose argument is the `struct request *`. Each request is
//! found again by that pointer; at its end its device (its queue's disk)
//! and operation are read from it, and its queue time (start → issue),
//! device time (issue → end) and total are counted into log-linear buckets
//! in a map, with their counts and sums in another. Nothing is sent to
//! user space per event.
//!
//! Not for: reading the maps (`super`), or any other tracepoint.

use super::bpf::{Alu, Cond, Helper, Map, Program, Reg, Size};
use super::btf::Btf;
use super::{Kind, Op, SUB_BUCKET_BITS};
use anyhow::Result;

/// Where the members the programs read lie in this kernel's structures.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// `struct request`'s `q`, `cmd_flags`.
    pub request_queue: i16,
    pub request_cmd_flags: i16,
    /// `struct request_queue`'s `disk`.
    pub queue_disk: i16,
    /// `struct gendisk`'s `major`, `first_minor`.
    pub disk_major: i16,
    pub disk_first_minor: i16,
}

impl Layout {
    /// The offsets from the kernel's BTF.
    pub fn of(btf: &Btf) -> Result<Layout> {
        let offset = |name: &str, member: &str| -> Result<i16> {
            Ok(i16::try_from(btf.member_offset(name, member)?)?)
        };
        Ok(Layout {
            request_queue: offset("request", "q")?,
            request_cmd_flags: offset("request", "cmd_flags")?,
            queue_disk: offset("request_queue", "disk")?,
            disk_major: offset("gendisk", "major")?,
            disk_first_minor: offset("gendisk", "first_minor")?,
        })
    }
}

/// Registers kept across helper calls.
const CTX: Reg = 6;
const NOW: Reg = 7;
const VALUE: Reg = 8;
const OP: Reg = 9;
const FP: Reg = 10;

/// Stack slots (offsets from the frame pointer).
const START_KEY: i16 = -8;
const START_VALUE: i16 = -24;
const STARTED_NS: i16 = -32;
const ISSUED_NS: i16 = -40;
const DELTA: i16 = -48;
const BUCKET_KEY: i16 = -56;
/// 16 bytes of zeros for a new map entry (and the lost counter's index).
const ZERO: i16 = -72;
/// Where a kernel value read through a pointer lands.
const READ: i16 = -80;
/// The request's device, as the kernel's dev_t (major << 20 | minor).
const DEVICE: i16 = -88;

/// Lost-event counters: index in the `lost` array map.
pub const ISSUED_UNSTARTED: u32 = 0;
pub const ENDED_UNSEEN: u32 = 1;
pub const STARTS_DROPPED: u32 = 2;

/// r6 = ctx, r7 = now, the start key (the request's address) on the stack.
fn prologue(program: &mut Program) {
    program.alu_reg(Alu::Mov, CTX, 1);
    program.call(Helper::KtimeGetNs);
    program.alu_reg(Alu::Mov, NOW, 0);
    program.load(Size::DW, 1, CTX, 0);
    program.store_reg(Size::DW, FP, START_KEY, 1);
}

fn stack_pointer(program: &mut Program, register: Reg, offset: i16) {
    program.alu_reg(Alu::Mov, register, FP);
    program.alu_imm(Alu::Add, register, i32::from(offset));
}

/// `lost[index] += 1`
fn count_lost(program: &mut Program, lost: &Map, index: u32) {
    program.store_imm(Size::W, FP, ZERO, index as i32);
    program.load_map(1, lost);
    stack_pointer(program, 2, ZERO);
    program.call(Helper::MapLookupElem);
    program.jump_imm(Cond::Eq, 0, 0, "lost_counted");
    program.alu_imm(Alu::Mov, 1, 1);
    program.atomic_add(0, 0, 1);
    program.label("lost_counted");
}

fn epilogue(program: &mut Program) {
    program.label("out");
    program.alu_imm(Alu::Mov, 0, 0);
    program.exit();
}

/// `block_io_start`: starts[request] = (now, 0).
pub fn start(starts: &Map, lost: &Map) -> Result<Vec<super::bpf::Insn>> {
    let mut program = Program::default();
    prologue(&mut program);
    program.store_reg(Size::DW, FP, START_VALUE, NOW);
    program.store_imm(Size::DW, FP, START_VALUE + 8, 0);
    program.load_map(1, starts);
    stack_pointer(&mut program, 2, START_KEY);
    stack_pointer(&mut program, 3, START_VALUE);
    program.alu_imm(Alu::Mov, 4, 0);
    program.call(Helper::MapUpdateElem);
    program.jump_imm(Cond::Eq, 0, 0, "out");
    count_lost(&mut program, lost, STARTS_DROPPED);
    epilogue(&mut program);
    program.finish()
}

/// `block_rq_issue`: the start's issue time is now; a request whose start
/// was not seen (started before tracing) gets start 0 and is counted.
pub fn issue(starts: &Map, lost: &Map) -> Result<Vec<super::bpf::Insn>> {
    let mut program = Program::default();
    prologue(&mut program);
    program.load_map(1, starts);
    stack_pointer(&mut program, 2, START_KEY);
    program.call(Helper::MapLookupElem);
    program.jump_imm(Cond::Eq, 0, 0, "unstarted");
    program.store_reg(Size::DW, 0, 8, NOW);
    program.jump("out");
    program.label("unstarted");
    program.store_imm(Size::DW, FP, START_VALUE, 0);
    program.store_reg(Size::DW, FP, START_VALUE + 8, NOW);
    program.load_map(1, starts);
    stack_pointer(&mut program, 2, START_KEY);
    stack_pointer(&mut program, 3, START_VALUE);
    program.alu_imm(Alu::Mov, 4, 0);
    program.call(Helper::MapUpdateElem);
    count_lost(&mut program, lost, ISSUED_UNSTARTED);
    epilogue(&mut program);
    program.finish()
}

/// `block_io_done`: the request's times into the histograms, and its start
/// forgotten.
pub fn done(
    layout: &Layout,
    starts: &Map,
    (buckets, totals): (&Map, &Map),
    lost: &Map,
) -> Result<Vec<super::bpf::Insn>> {
    let mut program = Program::default();
    prologue(&mut program);
    program.load_map(1, starts);
    stack_pointer(&mut program, 2, START_KEY);
    program.call(Helper::MapLookupElem);
    program.jump_imm(Cond::Ne, 0, 0, "found");
    count_lost(&mut program, lost, ENDED_UNSEEN);
    program.jump("out");
    program.label("found");
    program.alu_reg(Alu::Mov, VALUE, 0);
    program.load(Size::DW, 1, VALUE, 0);
    program.store_reg(Size::DW, FP, STARTED_NS, 1);
    program.load(Size::DW, 1, VALUE, 8);
    program.store_reg(Size::DW, FP, ISSUED_NS, 1);
    program.load_map(1, starts);
    stack_pointer(&mut program, 2, START_KEY);
    program.call(Helper::MapDeleteElem);
    operation(&mut program, layout);
    device(&mut program, layout);
    // Device time: issue → done; a request never seen issued has none.
    program.load(Size::DW, 1, FP, ISSUED_NS);
    program.jump_imm(Cond::Eq, 1, 0, "device_done");
    program.alu_reg(Alu::Mov, 2, NOW);
    program.alu_reg(Alu::Sub, 2, 1);
    record(&mut program, (buckets, totals), Kind::Device, "device");
    program.label("device_done");
    // Queue time and total: from a start seen.
    program.load(Size::DW, 1, FP, STARTED_NS);
    program.jump_imm(Cond::Eq, 1, 0, "out");
    program.alu_reg(Alu::Mov, 2, NOW);
    program.alu_reg(Alu::Sub, 2, 1);
    record(&mut program, (buckets, totals), Kind::Total, "total");
    program.load(Size::DW, 1, FP, ISSUED_NS);
    program.jump_imm(Cond::Eq, 1, 0, "out");
    program.load(Size::DW, 2, FP, STARTED_NS);
    program.alu_reg(Alu::Sub, 1, 2);
    program.alu_reg(Alu::Mov, 2, 1);
    record(&mut program, (buckets, totals), Kind::Queue, "queue");
    epilogue(&mut program);
    program.finish()
}

/// `*(size *)(FP + READ) = *(kernel *)(r1 + offset)`, through
/// `bpf_probe_read_kernel` (zeros when the pointer is bad); r0 = its value.
fn read_kernel(program: &mut Program, size: Size, bytes: i32, offset: i16) {
    program.alu_imm(Alu::Add, 1, i32::from(offset));
    program.alu_reg(Alu::Mov, 3, 1);
    program.store_imm(Size::DW, FP, READ, 0);
    stack_pointer(program, 1, READ);
    program.alu_imm(Alu::Mov, 2, bytes);
    program.call(Helper::ProbeReadKernel);
    program.load(size, 0, FP, READ);
}

/// r9 = the request's operation, grouped as /proc/diskstats groups them:
/// flush, discard, write (every operation with the write bit), read.
fn operation(program: &mut Program, layout: &Layout) {
    program.load(Size::DW, 1, CTX, 0);
    read_kernel(program, Size::W, 4, layout.request_cmd_flags);
    program.alu_imm(Alu::And, 0, 0xff);
    program.alu_imm(Alu::Mov, OP, Op::Flush as i32);
    program.jump_imm(Cond::Eq, 0, 2, "op_known");
    program.alu_imm(Alu::Mov, OP, Op::Discard as i32);
    program.jump_imm(Cond::Eq, 0, 3, "op_known");
    program.alu_imm(Alu::Mov, OP, Op::Read as i32);
    program.alu_imm(Alu::And, 0, 1);
    program.jump_imm(Cond::Eq, 0, 0, "op_known");
    program.alu_imm(Alu::Mov, OP, Op::Write as i32);
    program.label("op_known");
}

/// The stack slot DEVICE = the request's disk as a dev_t (major << 20 |
/// first minor): what /proc/diskstats names it by.
fn device(program: &mut Program, layout: &Layout) {
    program.load(Size::DW, 1, CTX, 0);
    read_kernel(program, Size::DW, 8, layout.request_queue);
    program.alu_reg(Alu::Mov, 1, 0);
    read_kernel(program, Size::DW, 8, layout.queue_disk);
    program.store_reg(Size::DW, FP, DELTA, 0);
    program.alu_reg(Alu::Mov, 1, 0);
    read_kernel(program, Size::W, 4, layout.disk_major);
    program.alu_imm(Alu::Lsh, 0, 20);
    program.store_reg(Size::W, FP, DEVICE, 0);
    program.load(Size::DW, 1, FP, DELTA);
    read_kernel(program, Size::W, 4, layout.disk_first_minor);
    program.load(Size::W, 1, FP, DEVICE);
    program.alu_reg(Alu::Or, 1, 0);
    program.store_reg(Size::W, FP, DEVICE, 1);
}

/// Counts r2 (nanoseconds) into `kind`'s bucket of (device, r9), and into
/// its totals (count, sum) in `totals`: a small map strata reads right
/// beside /proc/diskstats.
fn record(program: &mut Program, maps: (&Map, &Map), kind: Kind, name: &str) {
    let (buckets, totals) = maps;
    let label = |what: &str| format!("{name}_{what}");
    program.store_reg(Size::DW, FP, DELTA, 2);
    bucket_of(program, name);
    // The key (dev u32, op u8, kind u8, bucket u16); the bucket is in r1.
    program.load(Size::W, 2, FP, DEVICE);
    program.store_reg(Size::W, FP, BUCKET_KEY, 2);
    program.store_reg(Size::B, FP, BUCKET_KEY + 4, OP);
    program.store_imm(Size::B, FP, BUCKET_KEY + 5, kind as i32);
    program.store_reg(Size::H, FP, BUCKET_KEY + 6, 1);
    add_to(program, buckets, &[(0, None)], &label("bucket_added"));
    program.store_imm(Size::H, FP, BUCKET_KEY + 6, 0);
    add_to(
        program,
        totals,
        &[(0, None), (8, Some(DELTA))],
        &label("totals_added"),
    );
}

/// `map[key on the stack] += 1` (or the stack slot given) at each offset
/// of the value, making the entry (zeros) when it is new.
fn add_to(program: &mut Program, map: &Map, adds: &[(i16, Option<i16>)], done: &str) {
    let found = format!("{done}_found");
    program.load_map(1, map);
    stack_pointer(program, 2, BUCKET_KEY);
    program.call(Helper::MapLookupElem);
    program.jump_imm(Cond::Ne, 0, 0, &found);
    program.store_imm(Size::DW, FP, ZERO, 0);
    program.store_imm(Size::DW, FP, ZERO + 8, 0);
    program.load_map(1, map);
    stack_pointer(program, 2, BUCKET_KEY);
    stack_pointer(program, 3, ZERO);
    program.alu_imm(Alu::Mov, 4, 1);
    program.call(Helper::MapUpdateElem);
    program.load_map(1, map);
    stack_pointer(program, 2, BUCKET_KEY);
    program.call(Helper::MapLookupElem);
    program.jump_imm(Cond::Eq, 0, 0, done);
    program.label(&found);
    for (offset, slot) in adds {
        match slot {
            Some(slot) => program.load(Size::DW, 1, FP, *slot),
            None => program.alu_imm(Alu::Mov, 1, 1),
        }
        program.atomic_add(0, *offset, 1);
    }
    program.label(done);
}

/// r1 = the log-linear bucket of the value in the stack slot DELTA: exact
/// below 2^(bits+1), then 2^bits buckets per power of two.
fn bucket_of(program: &mut Program, name: &str) {
    let label = |what: &str| format!("{name}_{what}");
    let bits = SUB_BUCKET_BITS as i32;
    program.load(Size::DW, 1, FP, DELTA);
    program.jump_imm(Cond::Lt, 1, 1 << (bits + 1), &label("bucketed"));
    // r3 = the highest bit set, by halving r4.
    program.alu_imm(Alu::Mov, 3, 0);
    program.alu_reg(Alu::Mov, 4, 1);
    for shift in [32, 16, 8, 4, 2, 1] {
        let skip = label(&format!("msb_{shift}"));
        program.alu_reg(Alu::Mov, 5, 4);
        program.alu_imm(Alu::Rsh, 5, shift);
        program.jump_imm(Cond::Eq, 5, 0, &skip);
        program.alu_reg(Alu::Mov, 4, 5);
        program.alu_imm(Alu::Add, 3, shift);
        program.label(&skip);
    }
    // bucket = (msb - bits + 1) << bits | (value >> (msb - bits)) & (2^bits - 1)
    program.alu_reg(Alu::Mov, 4, 3);
    program.alu_imm(Alu::Sub, 4, bits);
    program.alu_reg(Alu::Rsh, 1, 4);
    program.alu_imm(Alu::And, 1, (1 << bits) - 1);
    program.alu_imm(Alu::Sub, 3, bits - 1);
    program.alu_imm(Alu::Lsh, 3, bits);
    program.alu_reg(Alu::Or, 1, 3);
    program.label(&label("bucketed"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_kernels_layout_is_read_from_its_btf() {
        let layout = Layout::of(&Btf::of_the_kernel().unwrap()).unwrap();
        assert_eq!(layout.request_queue, 0);
        assert!(layout.request_cmd_flags > 0 && layout.queue_disk > 0);
        assert!(layout.disk_first_minor > layout.disk_major);
    }
}
