//! What runs team runs: a hook the [`crate::AgentService`] calls after a
//! write that leaves a team run for the runner, and after a cancel that may
//! leave a workflow run running. The composition root binds the workflow
//! runner's (lf-runner's `OwnServices`) with
//! [`crate::AgentService::with_dispatch`]; a service without one dispatches
//! nothing (an app that embeds lf-agent runs its team runs itself, through
//! [`crate::AgentService::record_progress`]).
//!
//! The hook is told, never asked: it answers nothing, and whatever it fails
//! to do it logs and leaves for its own catch-up, which finds the queued
//! runs with [`crate::AgentStore::team_runs_in`]. The team run is written
//! before the hook is called, so a hook that fails loses nothing: the run
//! stays queued (or its workflow run is cancelled at its next step check).

use async_trait::async_trait;

use crate::model::TeamRun;

/// Runs team runs as workflow runs.
#[async_trait]
pub trait TeamDispatch: Send + Sync {
    /// `run` was just left queued (started with policy `auto`, or
    /// approved): start its workflow run, and record it with
    /// `record_progress(.., Move::Dispatch { run })` (or `Move::Fail` when
    /// the workflow cannot start). Called once per such write; it may also
    /// be dispatched by the catch-up, so it must be safe to do twice.
    async fn dispatch(&self, run: &TeamRun);

    /// `run` was just cancelled from queued or running (or while a step
    /// of its workflow run held a tool call for approval): stop its
    /// workflow run if it has one ([`TeamRun::workflow_run`], or one a
    /// dispatch started but had not recorded yet). Not called for a run
    /// cancelled while awaiting approval to start (it never had one).
    async fn cancel(&self, run: &TeamRun);

    /// An owner just decided the tool call a step of `run`'s workflow run
    /// held for approval (`run` is running again, its decision recorded as
    /// its last `approval_granted` or `approval_rejected` event): wake the
    /// step, which reads the decision and goes on. By default nothing is
    /// woken: the step finds the decision when it next looks.
    async fn held_call_decided(&self, run: &TeamRun) {
        let _ = run;
    }
}
