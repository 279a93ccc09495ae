//! Background work on tokio: [`Background`], the servers' [`Spawner`].
//!
//! Every task is tracked. [`Background::shutdown`] refuses new tasks, waits
//! for the running ones up to a grace period, then drops those still
//! running (at their next `.await`; lf-core's contract says a task must
//! leave the stores consistent wherever it is dropped) and logs each one it
//! dropped. A binary shuts its `Background` down after its transport stops
//! and before it closes the database.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lf_core::{Spawner, Task};
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How long a server waits for background work when it stops.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The [`Spawner`] of a server: tasks on one tokio runtime, tracked, with a
/// shutdown deadline.
pub struct Background {
    runtime: Handle,
    tracker: TaskTracker,
    /// Cancelled at the deadline: every task still running is dropped.
    deadline: CancellationToken,
    /// Set by [`Background::shutdown`]; held while a task is spawned, so a
    /// spawn either is tracked before shutdown waits or sees it closed.
    closed: Mutex<bool>,
    dropped: Arc<Mutex<Vec<&'static str>>>,
}

/// What [`Background::shutdown`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shutdown {
    /// The tasks still running at the deadline, dropped, by name.
    pub dropped: Vec<&'static str>,
}

impl Background {
    /// A spawner on the runtime `runtime`.
    pub fn new(runtime: Handle) -> Arc<Self> {
        Arc::new(Self {
            runtime,
            tracker: TaskTracker::new(),
            deadline: CancellationToken::new(),
            closed: Mutex::new(false),
            dropped: Arc::default(),
        })
    }

    /// A spawner on the runtime this is called from. Panics outside one.
    pub fn current() -> Arc<Self> {
        Self::new(Handle::current())
    }

    /// How many tasks are running.
    pub fn running(&self) -> usize {
        self.tracker.len()
    }

    /// Refuses new tasks, waits up to `grace` for the running ones, then
    /// drops those still running and logs them. Returns once every task has
    /// finished or been dropped.
    pub async fn shutdown(&self, grace: Duration) -> Shutdown {
        *self.closed.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.tracker.close();
        if !self.tracker.is_empty() {
            tracing::info!(tasks = self.tracker.len(), ?grace, "waiting for background work to finish");
        }
        if tokio::time::timeout(grace, self.tracker.wait()).await.is_err() {
            self.deadline.cancel();
            self.tracker.wait().await;
        }
        let dropped = std::mem::take(&mut *self.dropped.lock().unwrap_or_else(|p| p.into_inner()));
        if !dropped.is_empty() {
            tracing::warn!(tasks = ?dropped, ?grace, "background work dropped at shutdown: it did not finish in time");
        }
        Shutdown { dropped }
    }
}

impl Spawner for Background {
    fn spawn(&self, name: &'static str, task: Task) {
        let closed = self.closed.lock().unwrap_or_else(|p| p.into_inner());
        if *closed {
            tracing::warn!(task = name, "background work refused: the server is shutting down");
            return;
        }
        let deadline = self.deadline.clone();
        let dropped = self.dropped.clone();
        self.tracker.spawn_on(
            async move {
                tokio::select! {
                    biased;
                    () = task => {}
                    () = deadline.cancelled() => {
                        tracing::warn!(task = name, "background task dropped at the shutdown deadline");
                        dropped.lock().unwrap_or_else(|p| p.into_inner()).push(name);
                    }
                }
            },
            &self.runtime,
        );
        drop(closed);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    /// Sets its flag when dropped.
    struct Dropped(Arc<AtomicBool>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_that_finishes_in_the_grace_period_completes() {
        let background = Background::current();
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        background.spawn(
            "judge",
            Box::pin(async move {
                tokio::time::sleep(Duration::from_secs(2)).await;
                flag.store(true, Ordering::SeqCst);
            }),
        );
        assert_eq!(background.running(), 1);
        let report = background.shutdown(Duration::from_secs(5)).await;
        assert!(done.load(Ordering::SeqCst), "it ran to the end");
        assert_eq!(report, Shutdown { dropped: vec![] });
        assert_eq!(background.running(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_still_running_at_the_deadline_is_dropped() {
        let background = Background::current();
        let (finished, dropped) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let (f, d) = (finished.clone(), dropped.clone());
        background.spawn(
            "slow judge",
            Box::pin(async move {
                let _guard = Dropped(d);
                tokio::time::sleep(Duration::from_secs(3600)).await;
                f.store(true, Ordering::SeqCst);
            }),
        );
        background.spawn("quick", Box::pin(async {}));
        let started = tokio::time::Instant::now();
        let report = background.shutdown(Duration::from_secs(5)).await;
        assert_eq!(started.elapsed(), Duration::from_secs(5), "dropped at the deadline, not before or after");
        assert_eq!(report.dropped, ["slow judge"]);
        assert!(dropped.load(Ordering::SeqCst) && !finished.load(Ordering::SeqCst));
        assert_eq!(background.running(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_spawned_after_shutdown_never_runs() {
        let background = Background::current();
        assert_eq!(background.shutdown(Duration::from_secs(5)).await, Shutdown { dropped: vec![] });
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        background.spawn("late", Box::pin(async move { flag.store(true, Ordering::SeqCst) }));
        assert_eq!(background.running(), 0, "refused, not queued");
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert!(!ran.load(Ordering::SeqCst));
    }
}
