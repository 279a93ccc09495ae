//! The agents' call ledger over a server's life ([`AgentLedger`]): the
//! agent service holds allowances of the day's caps and group-commits the
//! action log, each call answering once its entry is committed (see
//! lf-agent's `AgentService::with_ledger`); this, every [`FLUSH_EVERY`]
//! while the server serves, reserves ahead for busy agents and writes the
//! entries no call is writing (of calls that went away, or that failed
//! with the store), and at the end writes the rest and gives back what is
//! held, before the database closes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lf_agent::AgentService;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How often the ledger is flushed. No answered call's log entry waits
/// for it: what it writes is only what no call is waiting for.
pub const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// Flushes an agent service's ledger while the server serves.
pub struct AgentLedger {
    agents: Arc<AgentService>,
    stop: CancellationToken,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl AgentLedger {
    pub fn new(agents: Arc<AgentService>) -> Self {
        AgentLedger { agents, stop: CancellationToken::new(), task: Mutex::new(None) }
    }

    /// Starts flushing (once; again is a no-op). Call it on a tokio runtime.
    pub fn start(&self) {
        let mut task = self.task.lock().unwrap_or_else(|p| p.into_inner());
        if task.is_some() {
            return;
        }
        let (agents, stop) = (self.agents.clone(), self.stop.clone());
        *task = Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(FLUSH_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    _ = tick.tick() => {
                        if let Err(e) = agents.flush().await {
                            tracing::warn!(error = %e, "the agents' action log could not be written yet");
                        }
                    }
                }
            }
        }));
    }

    /// Stops flushing, writes what waits and gives back what is held. Call
    /// it once no tool runs any more, before the database closes.
    pub async fn close(&self) {
        self.stop.cancel();
        let task = self.task.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(task) = task {
            let _ = task.await;
        }
        if let Err(e) = self.agents.close().await {
            tracing::warn!(error = %e, "the agents' ledger was not closed cleanly: some of the day's usage stays held until midnight UTC");
        }
    }
}
