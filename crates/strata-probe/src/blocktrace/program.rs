//! The three programs of the block tracer, assembled for this kernel's
//! structure layouts: a request's start (`block_io_start`), its issue to
//! the driver (`block_rq_issue`) and its end (`block_io_done`), all
//! BTF-typed raw tracepoints whose argument is the `struct request *`,
//! whose members are read directly. Each request is
//! found again by that pointer; at its end its device (its queue's disk)
//! and operation are read from it, and its queue time (start → issue),
//! device time (issue → end) and total are counted into log-linear buckets
//! per device, operation and role (the submitting thread's, from a map
//! strata fills: an array map's slot for the first series, else a hash
//! map), with their counts and sums in another; each
//! submitting process's totals in a third; and a request that took longer
//! than a floor, whole, in a ring of outliers. A request's entry stays in
//! the table once it has ended, marked so, and the structure's next
//! request writes over it in place (no map entry made or deleted per
//! request); an entry found not marked ended when its structure starts
//! again is an end the kernel did not run the end's program for, counted
//! (by the queue and flags kept with the start) in a fourth. Nothing is
//! sent to user space per event.
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
    /// `struct request`'s `__data_len` and `__sector`, read at issue.
    pub request_data_len: i16,
    pub request_sector: i16,
    /// `struct bio`'s `bi_bdev` and `bi_opf`, `struct block_device`'s
    /// `bd_disk`: a merged bio's disk and operation.
    pub bio_bdev: i16,
    pub bio_opf: i16,
    pub bdev_disk: i16,
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
            request_data_len: offset("request", "__data_len")?,
            request_sector: offset("request", "__sector")?,
            bio_bdev: offset("bio", "bi_bdev")?,
            bio_opf: offset("bio", "bi_opf")?,
            bdev_disk: offset("block_device", "bd_disk")?,
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
/// A request as kept from its start to its end (the `starts` map's value):
/// its start and issue times, its submitter, its size and sector at issue,
/// its queue and flags where first seen, the submitting thread.
const REQUEST: i16 = -80;
pub const REQUEST_BYTES: u32 = 72;
const DELTA: i16 = -96;
/// The series' dense slot plus one (0: none).
const SLOT: i16 = -104;
/// Not 0 when VALUE is this CPU's counts and sums of the series (its
/// slot's in `slot_totals`), added to without atomic instructions.
const TOTALS_PER_CPU: i16 = -112;
const BUCKET_KEY: i16 = -88;
/// A new map entry's value (zeros, or a process's name and zeros).
const FRESH: i16 = -320;
/// A series' totals' key: (dev u32, op u8, role << 2 u8, two zero bytes).
const SERIES_KEY: i16 = -240;
/// A request's bucket, kept across a call.
const BUCKET: i16 = -248;
/// Where a kernel value read through a pointer lands.
const READ: i16 = -152;
/// The request's device, as the kernel's dev_t (major << 20 | minor).
const DEVICE: i16 = -160;
const PROCESS_KEY: i16 = -176;
const QUEUE_NS: i16 = -184;
const DEVICE_NS: i16 = -192;
const TOTAL_NS: i16 = -200;
/// A 4-byte key: the submitting thread, a config index, an outlier slot.
const SMALL_KEY: i16 = -208;
const OUTLIER_SEQUENCE: i16 = -216;
/// The submitting thread's id.
const THREAD: i16 = -224;
/// A merge's key: (dev u32, op u8, role u8, two zero bytes).
const MERGE_KEY: i16 = -232;
const MERGE_ROLE: i16 = 5;

/// The offsets of a request's fields in `REQUEST` (and the starts map):
/// its queue and flags (`cmd_flags`) are kept from where it is first
/// seen, so a start still kept when the kernel reuses the request says
/// whose it was.
const STARTED: i16 = 0;
const ISSUED: i16 = 8;
const TGID: i16 = 16;
const ROLE: i16 = 20;
const BYTES: i16 = 24;
const FLAGS_AT: i16 = 28;
const SECTOR: i16 = 32;
const COMM: i16 = 40;
const QUEUE_AT: i16 = 56;
/// The submitting thread (a MariaDB connection's; a PostgreSQL backend's
/// is its process).
const THREAD_AT: i16 = 64;

/// Lost-event counters: index in the `lost` array map.
pub const ISSUED_UNSTARTED: u32 = 0;
pub const ENDED_UNSEEN: u32 = 1;
pub const STARTS_DROPPED: u32 = 2;
pub const PROCESSES_DROPPED: u32 = 3;
pub const LOST_COUNTERS: u32 = 4;

/// The `config` array map: the outlier floor (ns), the outliers seen,
/// whether roles were given.
pub const CONFIG_OUTLIER_FLOOR: u32 = 0;
pub const CONFIG_OUTLIERS_SEEN: u32 = 1;
/// Not 0 once strata has given a thread a role.
pub const CONFIG_ROLES_GIVEN: u32 = 2;
/// Dense slots given out (some may be past `DENSE_SLOTS`).
pub const CONFIG_SLOTS_TAKEN: u32 = 3;
pub const CONFIG_ENTRIES: u32 = 4;

/// The outliers' ring: slots, a power of two.
pub const OUTLIER_SLOTS: u32 = 4096;
/// An outlier's record: end (ns), tgid, role, op, dev, bytes, sector,
/// queue and device time (ns), the submitter's name, its sequence number,
/// the submitting thread.
pub const OUTLIER_BYTES: u32 = 80;
/// A process's totals per (tgid, dev, op, role): its name, requests,
/// bytes, device and queue time (ns); a per-CPU map, so its name is in the
/// part of the CPU that made the entry.
pub const PROCESS_KEY_BYTES: u32 = 16;
pub const PROCESS_VALUE_BYTES: u32 = 48;
/// A series' totals: each kind's count and sum (u64 each), by kind, then
/// its slot in the dense buckets plus one (0: none). A series with a slot
/// is counted in `slot_totals` instead, per CPU, in the same layout.
pub const SERIES_TOTALS_BYTES: u32 = 72;
pub const SLOT_AT: i16 = 64;
pub const SLOT_TOTALS_BYTES: u32 = 64;
pub const SERIES_CACHE_BYTES: u32 = 16;
/// Series given dense buckets (the first seen), and the buckets each kind
/// has there: values under 2^26 (67 ms, or 64 MiB). A series past these,
/// or a value over, is counted in the hash map of buckets instead.
pub const DENSE_SLOTS: u32 = 128;
pub const DENSE_BUCKETS: u32 = 2_560;
pub const DENSE_PER_SLOT: u32 = 4 * DENSE_BUCKETS;

/// The maps the programs share.
pub struct Maps<'a> {
    pub starts: &'a Map,
    pub buckets: &'a Map,
    pub dense: &'a Map,
    pub totals: &'a Map,
    pub slot_totals: &'a Map,
    /// Per CPU: the last series' key and slot plus one.
    pub series_cache: &'a Map,
    pub lost: &'a Map,
    pub roles: &'a Map,
    pub processes: &'a Map,
    pub config: &'a Map,
    pub outliers: &'a Map,
    pub merges: &'a Map,
    pub ends_missed: &'a Map,
}

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

/// `r0 = map[the 4-byte key]`, or 0.
fn lookup_small(program: &mut Program, map: &Map, key: u32) {
    program.store_imm(Size::W, FP, SMALL_KEY, key as i32);
    program.load_map(1, map);
    stack_pointer(program, 2, SMALL_KEY);
    program.call(Helper::MapLookupElem);
}

/// `lost[index] += 1`
fn count_lost(program: &mut Program, lost: &Map, index: u32) {
    let counted = format!("lost_{index}_counted");
    lookup_small(program, lost, index);
    program.jump_imm(Cond::Eq, 0, 0, &counted);
    program.alu_imm(Alu::Mov, 1, 1);
    program.atomic_add(0, 0, 1);
    program.label(&counted);
}

fn epilogue(program: &mut Program) {
    program.label("out");
    program.alu_imm(Alu::Mov, 0, 0);
    program.exit();
}

/// `bpf_map_update_elem`'s flags: make or replace.
const ANY: i32 = 0;

/// `starts[request] = REQUEST`: r0 = 0 when done.
fn store_request(program: &mut Program, maps: &Maps) {
    program.load_map(1, maps.starts);
    stack_pointer(program, 2, START_KEY);
    stack_pointer(program, 3, REQUEST);
    program.alu_imm(Alu::Mov, 4, ANY);
    program.call(Helper::MapUpdateElem);
}

/// The tracepoint's request's queue and flags into the request at `into`
/// (the stack's `REQUEST` or the entry in VALUE): two reads, where its
/// device and operation would take four.
fn first_seen(program: &mut Program, layout: &Layout, into: (Reg, i16)) {
    let members = [
        (Size::DW, layout.request_queue, QUEUE_AT),
        (Size::W, layout.request_cmd_flags, FLAGS_AT),
    ];
    request_members(program, &members, into);
}

/// Each (size, member, field) of `members`: the tracepoint's request's
/// member, read directly, into the field of the request at `into`.
fn request_members(program: &mut Program, members: &[(Size, i16, i16)], into: (Reg, i16)) {
    let (base, at) = into;
    program.load(Size::DW, 1, CTX, 0);
    for &(size, member, field) in members {
        program.load(size, 0, 1, member);
        program.store_reg(size, base, at + field, 0);
    }
}

/// `block_io_start`: starts[request] = (now, 0, the submitter's process,
/// its role, the request's flags and queue, the submitter's name and
/// thread),
/// written in place where the request's structure was seen before (the
/// kernel reuses a few per queue). An entry not marked ended is a start
/// whose end the kernel did not run the end's program for (the structure
/// is reused only once its request has ended): counted in `ends_missed`
/// under its own device, operation and role first.
pub fn start(layout: &Layout, maps: &Maps) -> Result<Vec<super::bpf::Insn>> {
    let mut program = Program::default();
    prologue(&mut program);
    program.store_imm(Size::DW, FP, REQUEST + TGID, 0);
    program.call(Helper::GetCurrentPidTgid);
    program.store_reg(Size::W, FP, THREAD, 0);
    program.alu_imm(Alu::Rsh, 0, 32);
    program.store_reg(Size::W, FP, REQUEST + TGID, 0);
    role_of_thread(&mut program, maps, REQUEST + ROLE);
    request_entry(&mut program, maps, "new_entry");
    jump_if_ended(&mut program, "reused");
    count_end_missed(&mut program, layout, maps);
    program.label("reused");
    fill_start(&mut program, layout, (VALUE, 0));
    program.jump("out");
    program.label("new_entry");
    fill_start(&mut program, layout, (FP, REQUEST));
    store_request(&mut program, maps);
    program.jump_imm(Cond::Eq, 0, 0, "out");
    count_lost(&mut program, maps.lost, STARTS_DROPPED);
    epilogue(&mut program);
    program.finish()
}

/// A start at `into` (the stack's `REQUEST` or the entry in VALUE): now,
/// not issued, the submitter (its process and role from `REQUEST`, its
/// thread from `THREAD`), no size or sector yet, the request's queue and
/// flags, the submitter's name (kept in an entry whose last request was
/// the same thread's: one helper call fewer per request for a process
/// that reuses its requests, as fio and a database's I/O threads do).
fn fill_start(program: &mut Program, layout: &Layout, into: (Reg, i16)) {
    let (base, at) = into;
    let reused = base == VALUE;
    if reused {
        // The same thread's last request on this structure left its name.
        program.load(Size::W, 1, base, at + THREAD_AT);
        program.load(Size::W, 2, FP, THREAD);
        program.store_imm(Size::DW, FP, READ, 0);
        program.jump_reg(Cond::Ne, 1, 2, "other_thread");
        program.store_imm(Size::DW, FP, READ, 1);
        program.label("other_thread");
    }
    program.store_reg(Size::DW, base, at + STARTED, NOW);
    program.store_imm(Size::DW, base, at + ISSUED, 0);
    program.load(Size::DW, 1, FP, REQUEST + TGID);
    program.store_reg(Size::DW, base, at + TGID, 1);
    program.store_imm(Size::DW, base, at + BYTES, 0);
    program.store_imm(Size::DW, base, at + SECTOR, 0);
    program.load(Size::W, 1, FP, THREAD);
    program.store_reg(Size::DW, base, at + THREAD_AT, 1);
    first_seen(program, layout, into);
    if reused {
        program.load(Size::DW, 1, FP, READ);
        program.jump_imm(Cond::Ne, 1, 0, "name_kept");
    }
    program.alu_reg(Alu::Mov, 1, base);
    program.alu_imm(Alu::Add, 1, i32::from(at + COMM));
    program.alu_imm(Alu::Mov, 2, 16);
    program.call(Helper::GetCurrentComm);
    if reused {
        program.label("name_kept");
    }
}

/// VALUE = the starts entry of the tracepoint's request (its address on
/// the stack), or on to `missing` when it has none.
fn request_entry(program: &mut Program, maps: &Maps, missing: &str) {
    program.load_map(1, maps.starts);
    stack_pointer(program, 2, START_KEY);
    program.call(Helper::MapLookupElem);
    program.jump_imm(Cond::Eq, 0, 0, missing);
    program.alu_reg(Alu::Mov, VALUE, 0);
}

/// Jumps to `ended` when the entry in VALUE is marked ended (its start and
/// issue times both 0: the end's program ran for it).
fn jump_if_ended(program: &mut Program, ended: &str) {
    program.load(Size::DW, 1, VALUE, STARTED);
    program.load(Size::DW, 2, VALUE, ISSUED);
    program.alu_reg(Alu::Or, 1, 2);
    program.jump_imm(Cond::Eq, 1, 0, ended);
}

/// ends_missed[the device, operation and role of the start in VALUE] += 1.
fn count_end_missed(program: &mut Program, layout: &Layout, maps: &Maps) {
    program.store_imm(Size::DW, FP, MERGE_KEY, 0);
    program.load(Size::B, 1, VALUE, ROLE);
    program.store_reg(Size::B, FP, MERGE_KEY + MERGE_ROLE, 1);
    program.load(Size::W, 0, VALUE, FLAGS_AT);
    op_of_flags(program);
    program.store_reg(Size::B, FP, MERGE_KEY + 4, OP);
    program.load(Size::DW, 1, VALUE, QUEUE_AT);
    device_of_queue(program, layout);
    program.load(Size::W, 1, FP, DEVICE);
    program.store_reg(Size::W, FP, MERGE_KEY, 1);
    count_at_merge_key(program, maps.ends_missed, "missed_added");
}

/// The role of the thread in `THREAD` into the byte at `into` (left as it
/// is when the thread has none). The roles' table is looked up only once
/// strata has given one.
fn role_of_thread(program: &mut Program, maps: &Maps, into: i16) {
    lookup_small(program, maps.config, CONFIG_ROLES_GIVEN);
    program.jump_imm(Cond::Eq, 0, 0, "no_role");
    program.load(Size::DW, 1, 0, 0);
    program.jump_imm(Cond::Eq, 1, 0, "no_role");
    program.load_map(1, maps.roles);
    stack_pointer(program, 2, THREAD);
    program.call(Helper::MapLookupElem);
    program.jump_imm(Cond::Eq, 0, 0, "no_role");
    program.load(Size::B, 1, 0, 0);
    program.store_reg(Size::B, FP, into, 1);
    program.label("no_role");
}

/// The request's size and sector as issued, into `REQUEST` (`at` the
/// stack) or the starts entry in VALUE.
fn size_and_sector(program: &mut Program, layout: &Layout, into: (Reg, i16)) {
    let members = [
        (Size::W, layout.request_data_len, BYTES),
        (Size::DW, layout.request_sector, SECTOR),
    ];
    request_members(program, &members, into);
}

/// `block_rq_issue`: the start's issue time is now, with the request's
/// size and sector; a request whose start was not seen (started before
/// tracing) gets start 0, no submitter, and is counted.
pub fn issue(layout: &Layout, maps: &Maps) -> Result<Vec<super::bpf::Insn>> {
    let mut program = Program::default();
    prologue(&mut program);
    request_entry(&mut program, maps, "unstarted");
    jump_if_ended(&mut program, "unstarted");
    program.store_reg(Size::DW, VALUE, ISSUED, NOW);
    size_and_sector(&mut program, layout, (VALUE, 0));
    program.jump("out");
    program.label("unstarted");
    for at in (0..REQUEST_BYTES as i16).step_by(8) {
        program.store_imm(Size::DW, FP, REQUEST + at, 0);
    }
    program.store_reg(Size::DW, FP, REQUEST + ISSUED, NOW);
    size_and_sector(&mut program, layout, (FP, REQUEST));
    first_seen(&mut program, layout, (FP, REQUEST));
    store_request(&mut program, maps);
    count_lost(&mut program, maps.lost, ISSUED_UNSTARTED);
    epilogue(&mut program);
    program.finish()
}

/// `block_io_done`: the request's times into the histograms of its device,
/// operation and role, its submitter's totals, the outliers' ring when it
/// took longer than the floor; its entry marked ended (start and issue
/// times 0), kept for the structure's next request.
pub fn done(layout: &Layout, maps: &Maps) -> Result<Vec<super::bpf::Insn>> {
    let mut program = Program::default();
    prologue(&mut program);
    request_entry(&mut program, maps, "unseen");
    jump_if_ended(&mut program, "unseen");
    program.jump("found");
    program.label("unseen");
    count_lost(&mut program, maps.lost, ENDED_UNSEEN);
    program.jump("out");
    program.label("found");
    for at in (0..REQUEST_BYTES as i16).step_by(8) {
        program.load(Size::DW, 1, VALUE, at);
        program.store_reg(Size::DW, FP, REQUEST + at, 1);
    }
    program.store_imm(Size::DW, VALUE, STARTED, 0);
    program.store_imm(Size::DW, VALUE, ISSUED, 0);
    operation(&mut program, layout.request_cmd_flags);
    device(
        &mut program,
        layout,
        [layout.request_queue, layout.queue_disk],
    );
    spans(&mut program, maps);
    submitter(&mut program, maps);
    outlier(&mut program, maps);
    epilogue(&mut program);
    program.finish()
}

/// What a merge tracepoint merged: a bio into a request
/// (`block_bio_backmerge`, `block_bio_frontmerge`), or a request into
/// another (`block_rq_merge`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Merged {
    Bio,
    Request,
}

/// A merge: merges[device, op, role] += 1, as /proc/diskstats counts
/// them (a bio merged into a request, or a request into another, by
/// operation), under the role of the thread the merge happened in (the
/// submitter's, for a bio merged as it was submitted). A request merged
/// into another ends without its own end: its start is forgotten.
pub fn merge(layout: &Layout, maps: &Maps, merged: Merged) -> Result<Vec<super::bpf::Insn>> {
    let mut program = Program::default();
    program.alu_reg(Alu::Mov, CTX, 1);
    if merged == Merged::Request {
        program.load(Size::DW, 1, CTX, 0);
        program.store_reg(Size::DW, FP, START_KEY, 1);
        program.load_map(1, maps.starts);
        stack_pointer(&mut program, 2, START_KEY);
        program.call(Helper::MapDeleteElem);
    }
    let (flags, to_disk) = match merged {
        Merged::Bio => (layout.bio_opf, [layout.bio_bdev, layout.bdev_disk]),
        Merged::Request => (
            layout.request_cmd_flags,
            [layout.request_queue, layout.queue_disk],
        ),
    };
    operation(&mut program, flags);
    device(&mut program, layout, to_disk);
    program.load(Size::W, 1, FP, DEVICE);
    program.store_reg(Size::W, FP, MERGE_KEY, 1);
    program.store_imm(Size::W, FP, MERGE_KEY + 4, 0);
    program.store_reg(Size::B, FP, MERGE_KEY + 4, OP);
    program.call(Helper::GetCurrentPidTgid);
    program.store_reg(Size::W, FP, THREAD, 0);
    role_of_thread(&mut program, maps, MERGE_KEY + MERGE_ROLE);
    count_at_merge_key(&mut program, maps.merges, "merge_added");
    epilogue(&mut program);
    program.finish()
}

/// Device time (issue → done; none for a request never seen issued) and
/// the size as issued, and from a start seen, the total and queue time,
/// into the histograms; each time kept in its stack slot.
fn spans(program: &mut Program, maps: &Maps) {
    series_totals(program, maps);
    for slot in [DEVICE_NS, QUEUE_NS] {
        program.store_imm(Size::DW, FP, slot, 0);
    }
    program.load(Size::DW, 1, FP, REQUEST + ISSUED);
    program.jump_imm(Cond::Eq, 1, 0, "device_done");
    program.alu_reg(Alu::Mov, 2, NOW);
    program.alu_reg(Alu::Sub, 2, 1);
    program.store_reg(Size::DW, FP, DEVICE_NS, 2);
    record(program, maps, Kind::Device, "device");
    program.load(Size::W, 2, FP, REQUEST + BYTES);
    record(program, maps, Kind::Size, "size");
    program.label("device_done");
    program.load(Size::DW, 1, FP, REQUEST + STARTED);
    program.jump_imm(Cond::Eq, 1, 0, "out");
    program.alu_reg(Alu::Mov, 2, NOW);
    program.alu_reg(Alu::Sub, 2, 1);
    program.store_reg(Size::DW, FP, TOTAL_NS, 2);
    record(program, maps, Kind::Total, "total");
    program.load(Size::DW, 1, FP, REQUEST + ISSUED);
    program.jump_imm(Cond::Eq, 1, 0, "queue_done");
    program.load(Size::DW, 2, FP, REQUEST + STARTED);
    program.alu_reg(Alu::Sub, 1, 2);
    program.store_reg(Size::DW, FP, QUEUE_NS, 1);
    program.alu_reg(Alu::Mov, 2, 1);
    record(program, maps, Kind::Queue, "queue");
    program.label("queue_done");
}

/// The submitting process's totals for (tgid, device, op, role): its
/// requests, bytes, device and queue time; a new entry carries its name.
fn submitter(program: &mut Program, maps: &Maps) {
    program.store_imm(Size::DW, FP, PROCESS_KEY + 8, 0);
    program.load(Size::W, 1, FP, REQUEST + TGID);
    program.store_reg(Size::W, FP, PROCESS_KEY, 1);
    program.load(Size::W, 1, FP, DEVICE);
    program.store_reg(Size::W, FP, PROCESS_KEY + 4, 1);
    program.store_reg(Size::B, FP, PROCESS_KEY + 8, OP);
    program.load(Size::B, 1, FP, REQUEST + ROLE);
    program.store_reg(Size::B, FP, PROCESS_KEY + 9, 1);
    let fresh = |program: &mut Program| {
        for at in [0, 8] {
            program.load(Size::DW, 1, FP, REQUEST + COMM + at);
            program.store_reg(Size::DW, FP, FRESH + at, 1);
        }
        for at in (16..PROCESS_VALUE_BYTES as i16).step_by(8) {
            program.store_imm(Size::DW, FP, FRESH + at, 0);
        }
    };
    let adds = [
        (16, None),
        (24, Some((Size::W, REQUEST + BYTES))),
        (32, Some((Size::DW, DEVICE_NS))),
        (40, Some((Size::DW, QUEUE_NS))),
    ];
    let target = AddTarget {
        map: maps.processes,
        key: PROCESS_KEY,
        fresh: &fresh,
        dropped: Some((maps.lost, PROCESSES_DROPPED)),
        per_cpu: true,
    };
    add_to(program, &target, &adds, "process_added");
}

/// A request whose total time reached the floor (`config[0]`, ns) is
/// written to the next slot of the outliers' ring, its sequence number
/// last.
fn outlier(program: &mut Program, maps: &Maps) {
    lookup_small(program, maps.config, CONFIG_OUTLIER_FLOOR);
    program.jump_imm(Cond::Eq, 0, 0, "out");
    program.load(Size::DW, 1, 0, 0);
    program.load(Size::DW, 2, FP, TOTAL_NS);
    program.jump_reg(Cond::Lt, 2, 1, "out");
    lookup_small(program, maps.config, CONFIG_OUTLIERS_SEEN);
    program.jump_imm(Cond::Eq, 0, 0, "out");
    program.alu_imm(Alu::Mov, 1, 1);
    program.atomic_fetch_add(0, 0, 1);
    program.alu_reg(Alu::Mov, 2, 1);
    program.alu_imm(Alu::Add, 2, 1);
    program.store_reg(Size::DW, FP, OUTLIER_SEQUENCE, 2);
    program.alu_imm(Alu::And, 1, (OUTLIER_SLOTS - 1) as i32);
    program.store_reg(Size::W, FP, SMALL_KEY, 1);
    program.load_map(1, maps.outliers);
    stack_pointer(program, 2, SMALL_KEY);
    program.call(Helper::MapLookupElem);
    program.jump_imm(Cond::Eq, 0, 0, "out");
    program.store_reg(Size::DW, 0, 0, NOW);
    let copies = [
        (Size::W, REQUEST + TGID, 8),
        (Size::B, REQUEST + ROLE, 12),
        (Size::W, DEVICE, 16),
        (Size::W, REQUEST + BYTES, 20),
        (Size::DW, REQUEST + SECTOR, 24),
        (Size::DW, QUEUE_NS, 32),
        (Size::DW, DEVICE_NS, 40),
        (Size::DW, REQUEST + COMM, 48),
        (Size::DW, REQUEST + COMM + 8, 56),
        (Size::DW, OUTLIER_SEQUENCE, 64),
        (Size::W, REQUEST + THREAD_AT, 72),
    ];
    program.store_reg(Size::B, 0, 13, OP);
    for (size, from, to) in copies {
        program.load(size, 1, FP, from);
        program.store_reg(size, 0, to, 1);
    }
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

/// r9 = the operation of the request or bio in the tracepoint's first
/// argument (its flags at `flags`), grouped as /proc/diskstats groups
/// them: flush, discard, write (every operation with the write bit), read.
fn operation(program: &mut Program, flags: i16) {
    program.load(Size::DW, 1, CTX, 0);
    program.load(Size::W, 0, 1, flags);
    op_of_flags(program);
}

/// r9 = the operation of the flags in r0.
fn op_of_flags(program: &mut Program) {
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

/// The stack slot DEVICE = the disk of the request or bio in the
/// tracepoint's first argument (reached through the two pointers at
/// `to_disk`) as a dev_t (major << 20 | first minor): what /proc/diskstats
/// names it by. The verifier knows the argument's type, so each member is
/// read directly (a bad pointer reads as 0).
fn device(program: &mut Program, layout: &Layout, to_disk: [i16; 2]) {
    program.load(Size::DW, 1, CTX, 0);
    for offset in to_disk {
        program.load(Size::DW, 1, 1, offset);
    }
    program.load(Size::W, 2, 1, layout.disk_major);
    program.load(Size::W, 3, 1, layout.disk_first_minor);
    program.alu_imm(Alu::Lsh, 2, 20);
    program.alu_reg(Alu::Or, 2, 3);
    program.store_reg(Size::W, FP, DEVICE, 2);
}

/// [`device`] from a queue's address kept as a number (in r1): read
/// through `bpf_probe_read_kernel`, the verifier knowing no type for it.
/// Where `first_minor` follows `major` in `struct gendisk` (every kernel
/// so far), both come in one read.
fn device_of_queue(program: &mut Program, layout: &Layout) {
    read_kernel(program, Size::DW, 8, layout.queue_disk);
    program.alu_reg(Alu::Mov, 1, 0);
    if layout.disk_first_minor == layout.disk_major + 4 {
        read_kernel(program, Size::DW, 8, layout.disk_major);
        program.alu_reg(Alu::Mov, 1, 0);
        program.alu_imm(Alu::Rsh, 1, 32);
        program.alu_imm(Alu::Lsh, 0, 52);
        program.alu_imm(Alu::Rsh, 0, 32);
        program.alu_reg(Alu::Or, 0, 1);
        program.store_reg(Size::W, FP, DEVICE, 0);
        return;
    }
    program.store_reg(Size::DW, FP, DELTA, 0);
    read_kernel(program, Size::W, 4, layout.disk_major);
    program.alu_imm(Alu::Lsh, 0, 20);
    program.store_reg(Size::W, FP, DEVICE, 0);
    program.load(Size::DW, 1, FP, DELTA);
    read_kernel(program, Size::W, 4, layout.disk_first_minor);
    program.load(Size::W, 1, FP, DEVICE);
    program.alu_reg(Alu::Or, 1, 0);
    program.store_reg(Size::W, FP, DEVICE, 1);
}

/// VALUE = the totals of the request's series (its device, the operation
/// in r9, its role), made when new, with the next dense slot while there
/// is one; 0 when it cannot be made.
fn series_totals(program: &mut Program, maps: &Maps) {
    program.load(Size::W, 2, FP, DEVICE);
    program.store_reg(Size::W, FP, SERIES_KEY, 2);
    program.store_imm(Size::W, FP, SERIES_KEY + 4, 0);
    program.store_reg(Size::B, FP, SERIES_KEY + 4, OP);
    program.load(Size::B, 2, FP, REQUEST + ROLE);
    program.alu_imm(Alu::Lsh, 2, 2);
    program.store_reg(Size::B, FP, SERIES_KEY + 5, 2);
    program.alu_imm(Alu::Mov, VALUE, 0);
    cached_slot(program, maps);
    program.load(Size::DW, 1, FP, SLOT);
    program.jump_imm(Cond::Ne, 1, 0, "slot_in_hand");
    let fresh = |program: &mut Program| {
        for at in (0..SERIES_TOTALS_BYTES as i16).step_by(8) {
            program.store_imm(Size::DW, FP, FRESH + at, 0);
        }
        lookup_small(program, maps.config, CONFIG_SLOTS_TAKEN);
        program.jump_imm(Cond::Eq, 0, 0, "slot_given");
        program.alu_imm(Alu::Mov, 1, 1);
        program.atomic_fetch_add(0, 0, 1);
        program.jump_imm(Cond::Ge, 1, DENSE_SLOTS as i32, "slot_given");
        program.alu_imm(Alu::Add, 1, 1);
        program.store_reg(Size::DW, FP, FRESH + SLOT_AT, 1);
        program.label("slot_given");
    };
    let target = AddTarget {
        map: maps.totals,
        key: SERIES_KEY,
        fresh: &fresh,
        dropped: None,
        per_cpu: false,
    };
    add_to(program, &target, &[], "series_found");
    program.alu_reg(Alu::Mov, VALUE, 0);
    program.jump_imm(Cond::Eq, VALUE, 0, "slot_in_hand");
    program.load(Size::DW, 1, VALUE, SLOT_AT);
    program.store_reg(Size::DW, FP, SLOT, 1);
    program.jump_imm(Cond::Eq, 1, 0, "slot_in_hand");
    lookup_small(program, maps.series_cache, 0);
    program.jump_imm(Cond::Eq, 0, 0, "slot_in_hand");
    program.load(Size::DW, 1, FP, SERIES_KEY);
    program.store_reg(Size::DW, 0, 0, 1);
    program.load(Size::DW, 1, FP, SLOT);
    program.store_reg(Size::DW, 0, 8, 1);
    program.label("slot_in_hand");
    slot_totals(program, maps);
}

/// SLOT = the slot this CPU's last series had, where this request's series
/// (SERIES_KEY) is that one: no hash lookup while a CPU's requests stay in
/// one series; else 0.
fn cached_slot(program: &mut Program, maps: &Maps) {
    program.store_imm(Size::DW, FP, SLOT, 0);
    lookup_small(program, maps.series_cache, 0);
    program.jump_imm(Cond::Eq, 0, 0, "cache_missed");
    program.load(Size::DW, 1, 0, 0);
    program.load(Size::DW, 2, FP, SERIES_KEY);
    program.jump_reg(Cond::Ne, 1, 2, "cache_missed");
    program.load(Size::DW, 1, 0, 8);
    program.store_reg(Size::DW, FP, SLOT, 1);
    program.label("cache_missed");
}

/// Where the series has a slot (SLOT, plus one), VALUE = this CPU's counts
/// and sums of it (TOTALS_PER_CPU not 0); else VALUE stays the shared
/// totals' entry (or 0).
fn slot_totals(program: &mut Program, maps: &Maps) {
    program.store_imm(Size::DW, FP, TOTALS_PER_CPU, 0);
    program.load(Size::DW, 1, FP, SLOT);
    program.jump_imm(Cond::Eq, 1, 0, "slot_known");
    program.alu_imm(Alu::Sub, 1, 1);
    program.store_reg(Size::W, FP, SMALL_KEY, 1);
    program.load_map(1, maps.slot_totals);
    stack_pointer(program, 2, SMALL_KEY);
    program.call(Helper::MapLookupElem);
    program.jump_imm(Cond::Eq, 0, 0, "slot_known");
    program.alu_reg(Alu::Mov, VALUE, 0);
    program.store_imm(Size::DW, FP, TOTALS_PER_CPU, 1);
    program.label("slot_known");
}

/// Counts r2 (nanoseconds) into `kind`'s bucket of (device, r9, role):
/// in the series' dense slot when it has one and the bucket is there,
/// else in the hash map of buckets; and into its count and sum in the
/// series' totals (in VALUE), a small map strata reads right beside
/// /proc/diskstats.
fn record(program: &mut Program, maps: &Maps, kind: Kind, name: &str) {
    let label = |what: &str| format!("{name}_{what}");
    program.store_reg(Size::DW, FP, DELTA, 2);
    bucket_of(program, name);
    dense_bucket(
        program,
        maps.dense,
        kind,
        (&label("hashed"), &label("bucket_added")),
    );
    program.label(&label("hashed"));
    // The key (dev u32, op u8, kind | role << 2 u8, bucket u16); the
    // bucket is in r1.
    program.load(Size::W, 2, FP, SERIES_KEY);
    program.store_reg(Size::W, FP, BUCKET_KEY, 2);
    program.store_reg(Size::B, FP, BUCKET_KEY + 4, OP);
    program.load(Size::B, 2, FP, SERIES_KEY + 5);
    program.alu_imm(Alu::Or, 2, kind as i32);
    program.store_reg(Size::B, FP, BUCKET_KEY + 5, 2);
    program.store_reg(Size::H, FP, BUCKET_KEY + 6, 1);
    let zeros = |program: &mut Program| {
        program.store_imm(Size::DW, FP, FRESH, 0);
    };
    let target = AddTarget {
        map: maps.buckets,
        key: BUCKET_KEY,
        fresh: &zeros,
        dropped: None,
        per_cpu: false,
    };
    add_to(program, &target, &[(0, None)], &label("bucket_added"));
    program.jump_imm(Cond::Eq, VALUE, 0, &label("totals_added"));
    let at = kind as i16 * 16;
    program.load(Size::DW, 2, FP, TOTALS_PER_CPU);
    program.jump_imm(Cond::Ne, 2, 0, &label("per_cpu"));
    for per_cpu in [false, true] {
        if per_cpu {
            program.label(&label("per_cpu"));
        }
        program.alu_imm(Alu::Mov, 1, 1);
        add(program, per_cpu, (VALUE, at), 1);
        program.load(Size::DW, 1, FP, DELTA);
        add(program, per_cpu, (VALUE, at + 8), 1);
        program.jump(&label("totals_added"));
    }
    program.label(&label("totals_added"));
}

/// `*(u64 *)(base + offset) += src`: atomically in a map all CPUs share,
/// plainly in this CPU's part of a per-CPU one (a program does not nest in
/// itself, so nothing else writes it meanwhile). r2 is overwritten.
fn add(program: &mut Program, per_cpu: bool, at: (Reg, i16), src: Reg) {
    let (base, offset) = at;
    match per_cpu {
        true => {
            program.load(Size::DW, 2, base, offset);
            program.alu_reg(Alu::Add, 2, src);
            program.store_reg(Size::DW, base, offset, 2);
        }
        false => program.atomic_add(base, offset, src),
    }
}

/// dense[(slot × 4 + kind) × DENSE_BUCKETS + the bucket in r1] += 1, then
/// on to `added`; on to `hashed` (r1 kept) where the series has no slot
/// or the bucket is past the dense ones. An array map's lookup is a few
/// instructions the verifier writes in place: no call, no hash.
fn dense_bucket(program: &mut Program, dense: &Map, kind: Kind, to: (&str, &str)) {
    let (hashed, added) = to;
    program.jump_imm(Cond::Ge, 1, DENSE_BUCKETS as i32, hashed);
    program.load(Size::DW, 2, FP, SLOT);
    program.jump_imm(Cond::Eq, 2, 0, hashed);
    program.alu_imm(Alu::Sub, 2, 1);
    program.alu_imm(Alu::Mul, 2, DENSE_PER_SLOT as i32);
    program.alu_imm(Alu::Add, 2, (kind as u32 * DENSE_BUCKETS) as i32);
    program.alu_reg(Alu::Add, 2, 1);
    program.store_reg(Size::W, FP, SMALL_KEY, 2);
    program.store_reg(Size::DW, FP, BUCKET, 1);
    program.load_map(1, dense);
    stack_pointer(program, 2, SMALL_KEY);
    program.call(Helper::MapLookupElem);
    program.alu_reg(Alu::Mov, 1, 0);
    program.load(Size::DW, 0, FP, BUCKET);
    program.jump_imm(Cond::Ne, 1, 0, &format!("{added}_dense"));
    program.alu_reg(Alu::Mov, 1, 0);
    program.jump(hashed);
    program.label(&format!("{added}_dense"));
    program.alu_imm(Alu::Mov, 2, 1);
    program.atomic_add(1, 0, 2);
    program.jump(added);
}

/// `map[MERGE_KEY] += 1`: a count by (device, operation, role), the entry
/// made when new.
fn count_at_merge_key(program: &mut Program, map: &Map, done: &str) {
    let zeros = |program: &mut Program| program.store_imm(Size::DW, FP, FRESH, 0);
    let target = AddTarget {
        map,
        key: MERGE_KEY,
        fresh: &zeros,
        dropped: None,
        per_cpu: false,
    };
    add_to(program, &target, &[(0, None)], done);
}

/// A map whose entry (its key on the stack) is added to: a new entry's
/// value is written to `FRESH` by `fresh`; one that cannot be made is
/// counted in `dropped` (the lost counters and an index), when given;
/// `per_cpu` for a per-CPU map (added to without atomic instructions).
struct AddTarget<'a> {
    map: &'a Map,
    key: i16,
    fresh: &'a dyn Fn(&mut Program),
    dropped: Option<(&'a Map, u32)>,
    per_cpu: bool,
}

/// `map[key] += 1` (or the stack slot given, of its size) at each offset
/// of the value, making the entry when it is new.
fn add_to(
    program: &mut Program,
    target: &AddTarget,
    adds: &[(i16, Option<(Size, i16)>)],
    done: &str,
) {
    let found = format!("{done}_found");
    program.load_map(1, target.map);
    stack_pointer(program, 2, target.key);
    program.call(Helper::MapLookupElem);
    program.jump_imm(Cond::Ne, 0, 0, &found);
    (target.fresh)(program);
    program.load_map(1, target.map);
    stack_pointer(program, 2, target.key);
    stack_pointer(program, 3, FRESH);
    program.alu_imm(Alu::Mov, 4, 1);
    program.call(Helper::MapUpdateElem);
    program.load_map(1, target.map);
    stack_pointer(program, 2, target.key);
    program.call(Helper::MapLookupElem);
    program.jump_imm(Cond::Ne, 0, 0, &found);
    if let Some((lost, index)) = target.dropped {
        count_lost(program, lost, index);
    }
    program.jump(done);
    program.label(&found);
    for (offset, slot) in adds {
        match slot {
            Some((size, slot)) => program.load(*size, 1, FP, *slot),
            None => program.alu_imm(Alu::Mov, 1, 1),
        }
        add(program, target.per_cpu, (0, *offset), 1);
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
