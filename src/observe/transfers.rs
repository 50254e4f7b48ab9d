//! When bytes moved between the devices, kept while a profile records (the statistics only
//! count them): the demo marks each copy on its timeline.

use std::cell::RefCell;

use crate::observe::clock::now_ms;
use crate::stream::Device;

/// One copy to `to` from the other device.
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer {
    pub to: Device,
    pub bytes: u64,
    /// When it was recorded (`performance.now()` in the browser): a readback when its data
    /// arrived, an upload when it was queued.
    pub at_ms: f64,
}

thread_local! {
    /// Whether it logs now, and what it logged.
    static LOG: RefCell<(bool, Vec<Transfer>)> = const { RefCell::new((false, Vec::new())) };
}

/// Starts logging, dropping anything logged before.
pub fn start() {
    LOG.with(|log| *log.borrow_mut() = (true, Vec::new()));
}

/// Pauses (`false`) or resumes (`true`) logging, keeping what was logged.
pub fn set_logging(on: bool) {
    LOG.with(|log| log.borrow_mut().0 = on);
}

/// Stops logging and returns the log.
pub fn finish() -> Vec<Transfer> {
    LOG.with(|log| std::mem::take(&mut *log.borrow_mut()).1)
}

pub(crate) fn note(to: Device, bytes: u64) {
    // At thread exit the log may be gone; nothing records then.
    let _ = LOG.try_with(|log| {
        let mut log = log.borrow_mut();
        if log.0 {
            let at_ms = now_ms();
            log.1.push(Transfer { to, bytes, at_ms });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_only_between_start_and_finish_and_not_while_paused() {
        note(Device::Gpu, 1);
        start();
        note(Device::Gpu, 2);
        set_logging(false);
        note(Device::Cpu, 3);
        set_logging(true);
        note(Device::Cpu, 4);
        let log = finish();
        let seen: Vec<(Device, u64)> = log.iter().map(|t| (t.to, t.bytes)).collect();
        assert_eq!(seen, vec![(Device::Gpu, 2), (Device::Cpu, 4)]);
        note(Device::Gpu, 5);
        assert!(finish().is_empty());
    }
}
