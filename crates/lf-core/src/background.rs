//! Background work. A domain service that starts something which outlives
//! the call that asked for it (judging a battle, later a workflow run or an
//! agent's team run) hands it to a [`Spawner`]; the composition root
//! decides where it runs (a tokio runtime with a shutdown deadline in the
//! servers) and what shutting down means. lf-core needs no runtime for it.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use lf_core::{Spawner, Task};
//!
//! /// Keeps the tasks for the test to run.
//! #[derive(Default)]
//! struct Later(Mutex<Vec<(&'static str, Task)>>);
//!
//! impl Spawner for Later {
//!     fn spawn(&self, name: &'static str, task: Task) {
//!         self.0.lock().unwrap().push((name, task));
//!     }
//! }
//!
//! let later = Arc::new(Later::default());
//! let spawner: Arc<dyn Spawner> = later.clone();
//! spawner.spawn("say hello", Box::pin(async { println!("hello") }));
//! let (name, task) = later.0.lock().unwrap().pop().unwrap();
//! assert_eq!(name, "say hello");
//! pollster::block_on(task);
//! ```

use std::future::Future;
use std::pin::Pin;

/// A unit of background work: it reports its own outcome (logs, rows it
/// writes), so nothing waits for its result.
pub type Task = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Starts background work.
///
/// Contract: `spawn` returns at once. The task runs to completion unless
/// the spawner is shutting down, in which case it may be dropped at an
/// `.await` point: a task must leave the stores consistent wherever it is
/// dropped (every store write is a transaction of its own).
pub trait Spawner: Send + Sync {
    /// Starts `task`; `name` says what it is, for logs.
    fn spawn(&self, name: &'static str, task: Task);
}
