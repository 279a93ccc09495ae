//! Watching stdin for a moment before sleeping.
//!
//! A client that calls tools one after another sends its next request a few
//! microseconds after it reads an answer. If the server's thread has gone to
//! sleep by then, the request waits for the kernel to wake it, and on a
//! virtual machine an idle CPU is often handed back to the host, so the
//! server also starts again with cold caches. Before its thread sleeps, the
//! server therefore watches stdin (and its own task queue) for at most the
//! linger time (`LENSERFIGHT_LINGER_US`, 50 µs by default; 0 sleeps at once):
//! a request that arrives meanwhile is read at once. This is done only on a
//! machine with more than one CPU, so that the watch never takes the CPU
//! the client needs to send the request; and it costs at most the linger
//! time after each burst of work, never while the server is idle.

use std::time::Duration;

/// The default linger time, in microseconds.
pub const DEFAULT_LINGER_US: u64 = 50;
/// The longest linger time allowed, in microseconds: past a few
/// milliseconds the watch only burns CPU.
pub const MAX_LINGER_US: u64 = 10_000;

/// Why a linger ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Woke {
    /// The input has something to read (or has closed).
    Input,
    /// A task was woken from another thread (the database's, say).
    Task,
    /// Nothing came within the linger time.
    Timeout,
}

/// The current-thread runtime the stdio server runs on, lingering up to
/// `linger` on stdin before its thread sleeps (not at all when `linger` is
/// zero, or on a machine with one CPU, or off Unix).
pub fn runtime(linger: Duration) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_current_thread();
    builder.enable_all();
    if !linger.is_zero() && several_cpus() {
        builder.on_thread_park(move || {
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                let metrics = handle.metrics();
                watch_stdin(linger, || metrics.global_queue_depth() > 0);
            }
        });
    }
    builder.build()
}

/// Whether the machine has more than one CPU online (whatever this process
/// is pinned to: the client runs elsewhere).
fn several_cpus() -> bool {
    #[cfg(unix)]
    {
        // SAFETY: sysconf reads a system setting; it has no preconditions.
        unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) > 1 }
    }
    #[cfg(not(unix))]
    {
        false
    }
}

#[cfg(unix)]
fn watch_stdin(linger: Duration, woken: impl Fn() -> bool) -> Woke {
    use std::os::fd::AsFd;
    watch(std::io::stdin().as_fd(), linger, woken)
}

#[cfg(not(unix))]
fn watch_stdin(_linger: Duration, _woken: impl Fn() -> bool) -> Woke {
    Woke::Timeout
}

/// Waits, without sleeping, until `input` can be read, `woken()` says a
/// task was woken, or `linger` has passed.
#[cfg(unix)]
fn watch(input: std::os::fd::BorrowedFd<'_>, linger: Duration, woken: impl Fn() -> bool) -> Woke {
    use std::os::fd::AsRawFd;
    let deadline = std::time::Instant::now() + linger;
    let mut poll = libc::pollfd { fd: input.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    loop {
        // SAFETY: one valid pollfd, and a timeout of 0: poll returns at once.
        if unsafe { libc::poll(&mut poll, 1, 0) } != 0 {
            // Readable, closed, or an error: the reader finds out which.
            return Woke::Input;
        }
        if woken() {
            return Woke::Task;
        }
        if std::time::Instant::now() >= deadline {
            return Woke::Timeout;
        }
        std::hint::spin_loop();
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::io::Write;
    use std::os::fd::AsFd;

    use super::*;

    fn pipe() -> (std::io::PipeReader, std::io::PipeWriter) {
        std::io::pipe().expect("a pipe")
    }

    #[test]
    fn a_pending_line_ends_the_watch() {
        let (reader, mut writer) = pipe();
        writer.write_all(b"{}\n").unwrap();
        assert_eq!(watch(reader.as_fd(), Duration::from_secs(60), || false), Woke::Input);
    }

    #[test]
    fn a_closed_input_ends_the_watch() {
        let (reader, writer) = pipe();
        drop(writer);
        assert_eq!(watch(reader.as_fd(), Duration::from_secs(60), || false), Woke::Input);
    }

    #[test]
    fn a_woken_task_ends_the_watch() {
        let (reader, _writer) = pipe();
        assert_eq!(watch(reader.as_fd(), Duration::from_secs(60), || true), Woke::Task);
    }

    #[test]
    fn a_quiet_input_is_watched_for_the_linger_time_only() {
        let (reader, _writer) = pipe();
        let started = std::time::Instant::now();
        assert_eq!(watch(reader.as_fd(), Duration::from_millis(2), || false), Woke::Timeout);
        assert!(started.elapsed() >= Duration::from_millis(2));
    }

    /// A line written while the server's thread watches is read at once.
    #[test]
    fn a_line_written_during_the_watch_ends_it() {
        let (reader, mut writer) = pipe();
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            writer.write_all(b"{}\n").unwrap();
            writer
        });
        assert_eq!(watch(reader.as_fd(), Duration::from_secs(60), || false), Woke::Input);
        drop(late.join());
    }

    /// The runtime still runs tasks, and tasks woken from other threads.
    #[test]
    fn the_lingering_runtime_runs_tasks_woken_elsewhere() {
        let rt = runtime(Duration::from_micros(DEFAULT_LINGER_US)).unwrap();
        let answer = rt.block_on(async {
            let (tx, rx) = tokio::sync::oneshot::channel();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(5));
                tx.send(42).unwrap();
            });
            rx.await.unwrap()
        });
        assert_eq!(answer, 42);
    }
}
