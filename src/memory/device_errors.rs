//! Out-of-memory errors that the GPU reports for buffer creation.
//!
//! WebGPU does not fail `createBuffer` synchronously: it returns an invalid buffer and reports
//! the error to an error scope, whose result arrives later. A command buffer that uses an
//! invalid buffer fails as a whole, so the scheduler submits no batch until every buffer
//! created for it is verified ([`verify`]); a batch with a failed buffer is discarded and its
//! nodes are run again after the cache is emptied, like any allocation past the limit.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};

use crate::error::{Error, Result};
use crate::memory::heap::segment::Segment;

type Report = Pin<Box<dyn Future<Output = Option<wgpu::Error>>>>;

/// A buffer whose creation has not been confirmed yet.
struct Unverified {
    segment: Weak<Segment>,
    requested: u64,
    report: Report,
}

thread_local! {
    static UNVERIFIED: RefCell<Vec<Unverified>> = const { RefCell::new(Vec::new()) };
    /// Reports that [`verify`] has taken and is still awaiting.
    static VERIFYING: Cell<usize> = const { Cell::new(0) };
}

#[cfg(feature = "test-hooks")]
thread_local! {
    /// Test hook: how many of the next created buffers to report as out of memory.
    static FAIL_NEXT: Cell<usize> = const { Cell::new(0) };
}

/// Whether the test hook asks this buffer to report out of memory (never without it).
fn simulated_failure() -> bool {
    #[cfg(feature = "test-hooks")]
    return FAIL_NEXT.with(|n| {
        let failing = n.get() > 0;
        n.set(n.get().saturating_sub(1));
        failing
    });
    #[cfg(not(feature = "test-hooks"))]
    false
}

/// Creates a buffer inside an out-of-memory error scope and remembers the scope's report.
pub(crate) fn create_watched(
    device: &wgpu::Device,
    descriptor: &wgpu::BufferDescriptor,
) -> (wgpu::Buffer, impl FnOnce(&Rc<Segment>) + use<>) {
    let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let buffer = device.create_buffer(descriptor);
    let report: Report = Box::pin(scope.pop());
    let simulated = simulated_failure();
    let requested = descriptor.size;
    let watch = move |segment: &Rc<Segment>| {
        let report = if simulated {
            Box::pin(async { Some(simulated_error()) })
        } else {
            report
        };
        UNVERIFIED.with(|u| {
            u.borrow_mut().push(Unverified {
                segment: Rc::downgrade(segment),
                requested,
                report,
            })
        });
    };
    (buffer, watch)
}

fn simulated_error() -> wgpu::Error {
    wgpu::Error::OutOfMemory {
        source: "out of memory (simulated by a test)".into(),
    }
}

/// Whether some created buffer has not been confirmed yet, including those a [`verify`]
/// under way is awaiting.
pub fn has_unverified() -> bool {
    UNVERIFIED.with(|u| !u.borrow().is_empty()) || VERIFYING.with(Cell::get) > 0
}

/// Waits for the reports of every buffer created so far. A buffer the GPU could not create is
/// marked lost, with every block carved from it (it is never reused), and the result is a
/// `MemoryLimitError` naming it.
///
/// Buffers are marked only once every report is in, with no await between the marking and
/// the return: the caller discards the work that uses them before any other caller can see
/// a lost buffer.
pub async fn verify() -> Result<()> {
    let pending = UNVERIFIED.with(|u| std::mem::take(&mut *u.borrow_mut()));
    let mut awaiting = Awaiting::new(pending.len());
    let mut reports = Vec::with_capacity(pending.len());
    for unverified in pending {
        let report = unverified.report.await;
        awaiting.one_done();
        reports.push((unverified.segment, unverified.requested, report));
    }
    let mut failure = None;
    for (segment, requested, report) in reports {
        let Some(error) = report else {
            continue;
        };
        // A segment already destroyed took no work with it.
        if let Some(segment) = segment.upgrade() {
            segment.mark_lost();
        }
        failure.get_or_insert(Error::MemoryLimit(format!(
            "the GPU ran out of memory creating a buffer of {requested} bytes ({error})"
        )));
    }
    if failure.is_some() {
        crate::memory::heap::with(|h| h.drop_spent());
    }
    failure.map_or(Ok(()), Err)
}

/// Counts reports in [`VERIFYING`] while a [`verify`] awaits them, even if it is dropped.
struct Awaiting(usize);

impl Awaiting {
    fn new(count: usize) -> Awaiting {
        VERIFYING.with(|v| v.set(v.get() + count));
        Awaiting(count)
    }

    fn one_done(&mut self) {
        self.0 -= 1;
        VERIFYING.with(|v| v.set(v.get() - 1));
    }
}

impl Drop for Awaiting {
    fn drop(&mut self) {
        VERIFYING.with(|v| v.set(v.get() - self.0));
    }
}

/// Makes the next `count` created buffers report out of memory, to test the recovery path
/// (a real device cannot be made to run out on demand). Only with the `test-hooks` feature.
#[cfg(feature = "test-hooks")]
pub fn fail_next_buffers_for_tests(count: usize) {
    FAIL_NEXT.with(|n| n.set(count));
}
