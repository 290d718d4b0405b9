//! The psync engine: pread/pwrite from the calling thread, one request at a
//! time (fio's `psync`). Parallelism comes from more worker threads. Not for
//! keeping many requests in flight from one thread: that is io_uring's job.

use crate::buffer::AlignedBuffer;
use crate::engine::{IoCompletion, IoEngine, IoRequest, Operation};
use std::io;
use std::os::fd::RawFd;

pub struct PsyncEngine {
    fd: RawFd,
    buffers: Vec<AlignedBuffer>,
    queued: Vec<IoRequest>,
}

impl PsyncEngine {
    pub fn new(fd: RawFd, buffers: Vec<AlignedBuffer>) -> Self {
        PsyncEngine {
            fd,
            queued: Vec::with_capacity(buffers.len()),
            buffers,
        }
    }

    fn execute(&mut self, request: IoRequest) -> i64 {
        let buffer = &mut self.buffers[request.slot as usize];
        let len = request.len as usize;
        let offset = request.offset as libc::off_t;
        let result = unsafe {
            match request.operation {
                Operation::Read => libc::pread(self.fd, buffer.as_mut_ptr().cast(), len, offset),
                Operation::Write => libc::pwrite(self.fd, buffer.as_mut_ptr().cast(), len, offset),
            }
        };
        if result < 0 {
            return -i64::from(
                io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO),
            );
        }
        if request.datasync && unsafe { libc::fdatasync(self.fd) } != 0 {
            return -i64::from(
                io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO),
            );
        }
        result as i64
    }
}

impl IoEngine for PsyncEngine {
    fn name(&self) -> &'static str {
        "psync"
    }

    fn depth(&self) -> usize {
        self.buffers.len()
    }

    fn buffer(&self, slot: u32) -> &[u8] {
        self.buffers[slot as usize].as_slice()
    }

    fn queue(&mut self, request: IoRequest) -> io::Result<()> {
        self.queued.push(request);
        Ok(())
    }

    fn submit_and_reap(
        &mut self,
        _min_complete: usize,
        completions: &mut Vec<IoCompletion>,
    ) -> io::Result<()> {
        let queued = std::mem::take(&mut self.queued);
        for request in &queued {
            let result = self.execute(*request);
            completions.push(IoCompletion {
                slot: request.slot,
                result,
            });
        }
        self.queued = queued;
        self.queued.clear();
        Ok(())
    }
}
