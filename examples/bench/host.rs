//! The host's share of a round trip's tail: how often the spinning thread itself is interrupted
//! (a thread that only reads the clock, timed for a while), and a real-time placement for it
//! (pinned to one CPU, `SCHED_FIFO`) that the resident section measures beside the default one.
//!
//! A resident round trip is a few microseconds of bus and device time; a timer tick, an
//! interrupt or a preemption of the waiting thread adds its whole length to the one step it
//! lands in. Which of them a machine has decides the p99.9 more than the device does.

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use crate::report::Report;

/// The gaps a thread that does nothing but read the clock saw over `span`: each gap between
/// two consecutive reads longer than 1 us, in us.
fn gaps(span: Duration) -> Vec<f64> {
    let start = Instant::now();
    let mut last = start;
    let mut out = Vec::new();
    loop {
        let now = Instant::now();
        let gap = now - last;
        if gap > Duration::from_micros(1) {
            out.push(gap.as_secs_f64() * 1e6);
        }
        if now - start >= span {
            return out;
        }
        last = now;
    }
}

/// Interruptions of a spinning thread per second (over 1, 2, 5, 10 us) and the longest, with
/// the default placement and, when the system allows it, the real-time one.
pub fn jitter(report: &mut Report) {
    let span = Duration::from_secs(3);
    record(report, "host_jitter_default", &gaps(span), span);
    match Realtime::enter() {
        Ok(rt) => {
            report.add("host_realtime_cpu", rt.cpu as f64, "cpu");
            report.add("host_realtime_fifo", f64::from(u8::from(rt.fifo)), "bool");
            record(report, "host_jitter_realtime", &gaps(span), span);
        }
        Err(e) => println!("host: no real-time placement ({e}); its jitter figures are missing"),
    }
}

fn record(report: &mut Report, tag: &str, gaps: &[f64], span: Duration) {
    let per_s = |floor: f64| gaps.iter().filter(|&&g| g > floor).count() as f64 / span.as_secs_f64();
    for floor in [1.0, 2.0, 5.0, 10.0] {
        report.add(format!("{tag}_gaps_over_{floor}us"), per_s(floor), "1/s");
    }
    report.add(format!("{tag}_longest_gap"), gaps.iter().copied().fold(0.0, f64::max), "us");
}

/// The calling thread pinned to one CPU, under `SCHED_FIFO` where allowed, until dropped, which
/// restores its affinity and policy. Threads it spawns meanwhile would inherit both: spawn them
/// first.
pub struct Realtime {
    /// The CPU the thread is pinned to.
    pub cpu: usize,
    /// Whether it runs under `SCHED_FIFO` (else pinned only).
    pub fifo: bool,
    affinity: libc::cpu_set_t,
    policy: libc::c_int,
    param: libc::sched_param,
    /// The placement belongs to the thread that entered it: `!Send`, so it is left there too.
    _thread: PhantomData<*const ()>,
}

impl Realtime {
    /// Pins the calling thread to the highest-numbered CPU it may run on (the one least likely to
    /// take the driver's other threads) and raises it to `SCHED_FIFO` priority 50 where allowed.
    pub fn enter() -> Result<Realtime, String> {
        // SAFETY: plain libc calls on the calling thread (pid 0) with structures of the sizes
        // they expect, zero-initialised (a valid `cpu_set_t` and `sched_param`).
        unsafe {
            let mut affinity: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut affinity) != 0 {
                return Err(format!("sched_getaffinity: {}", std::io::Error::last_os_error()));
            }
            let cpu = (0..libc::CPU_SETSIZE as usize)
                .rev()
                .find(|&c| libc::CPU_ISSET(c, &affinity))
                .ok_or("no CPU in this thread's affinity")?;
            let policy = libc::sched_getscheduler(0);
            let mut param: libc::sched_param = std::mem::zeroed();
            libc::sched_getparam(0, &mut param);
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut one);
            if libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &one) != 0 {
                return Err(format!("sched_setaffinity: {}", std::io::Error::last_os_error()));
            }
            // SCHED_FIFO needs CAP_SYS_NICE, which a container may not grant: then the thread
            // stays pinned under its old policy, and `fifo` says so.
            let fifo = libc::sched_param { sched_priority: 50 };
            let fifo = libc::sched_setscheduler(0, libc::SCHED_FIFO, &fifo) == 0;
            if !fifo {
                println!("host: SCHED_FIFO refused ({}); pinned only", std::io::Error::last_os_error());
            }
            Ok(Realtime { cpu, fifo, affinity, policy, param, _thread: PhantomData })
        }
    }
}

impl Drop for Realtime {
    fn drop(&mut self) {
        // SAFETY: as in `enter`: the calling thread, the values `enter` read back.
        unsafe {
            libc::sched_setscheduler(0, self.policy, &self.param);
            libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &self.affinity);
        }
    }
}
