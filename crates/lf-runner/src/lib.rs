//! The workflow runner: the durable half of running workflows, on tokio.
//!
//! A [`Runner`] claims due runs from a [`lf_workflow::run::RunStore`]
//! under a lease, rebuilds each run's state from its rows, and feeds the
//! engine's step function ([`lf_workflow::engine::step`]) with what
//! happens: node results from the [`Executors`], timers, cancel requests
//! and lost leases. Every change the engine makes is written under the
//! lease token before the attempts it asks for start, so a process that
//! dies mid-run loses nothing: after the lease expires another runner
//! takes the run over and runs the unfinished attempts again with the same
//! attempt numbers (and so the same idempotency keys).
//!
//! - Which executor runs which node type is one table, in steps.rs
//!   (`STEPS`, held to lf-workflow's node catalog by its tests);
//!   [`Executors::all`] fills a runner's executors from it with the
//!   [`StepNeeds`] the composition root hands over.
//! - New runs and cancel requests wake the claim loop at once through the
//!   [`lf_workflow::run::RunSignal`] of [`Runner::signal`]; otherwise it
//!   sleeps until the store's next due run (a timer, a lease's end).
//! - A run with nothing running and only a distant timer is released; the
//!   store makes it due again when its timer fires. An executor that
//!   cannot go on yet ([`Done::again_at`], a full rate-limit window) is
//!   such a timer too: the same attempt runs again then.
//! - The line a step writes to its run's log (a `logger` step's,
//!   [`Done::log`]) is saved with its result, where get_workflow_run_logs
//!   reads it, and once saved is written to the server's log (tracing) at
//!   its level, naming the run, its workflow and the step.
//! - What a step gives back (output, error, log line, saved state) passes
//!   the redaction of the saved connections it opened ([`Job::secrets`])
//!   in [`Executors::execute`] and [`Job::checkpoint`], before any of it
//!   is stored or logged.
//! - [`Runner::shutdown`] stops claiming and starting nodes, lets running
//!   nodes finish within the grace period, then releases what it holds.
//! - A [`Scheduler`] given to [`Runner::schedule`] starts the runs of
//!   scheduled workflows at their ticks, once per tick across processes.
//! - The [`RunEnds`] given to [`Runner::on_end`] hears of every run that
//!   ends ([`OwnServices`]: run events, the answers of workflow
//!   contenders, the ends of agents' team runs) and catches up now and
//!   then on ends nobody heard.
//! - [`OwnServices`] is also the agents' [`lf_agent::TeamDispatch`]: a
//!   team run is run as a workflow run of origin `team`, keyed by the team
//!   run, and its steps and end are recorded on it.
//! - [`AgentSteps`] runs `agent_execute`: an AI Lenser's tool-calling loop
//!   ([`agent_loop`]) with the tools an [`AgentTools`] gives, saved as it
//!   goes ([`Job::checkpoint`]), waiting durably for an owner's approval of
//!   a destructive call ([`Done::hold`]).
//! - [`ContenderSteps`] runs `contender_run`: an AI Lenser answers a
//!   battle as its ai_agent contender, through the same [`AgentTools`]
//!   (the action word `answer_battle`); its output is saved right after
//!   the submission, so a step run again does not answer again.

pub mod agent_loop;
mod agent_step;
mod answers;
mod asks;
mod compose;
mod contender;
mod executor;
mod experiment_contenders;
mod experiments;
mod kv;
pub mod mcp;
mod model;
pub mod outbound;
mod runner;
mod schedule;
mod steps;
mod teams;

pub use agent_step::{AgentSteps, AgentTools, RECHECK};
pub use asks::ModelAsks;
pub use compose::{DEEPEST, OwnServices};
pub use contender::ContenderSteps;
pub use executor::{Checkpoints, Done, Executor, Executors, Hold, Job, OpenedSecrets};
pub use experiment_contenders::ExperimentContenders;
pub use experiments::ExperimentCells;
pub use kv::KvSteps;
pub use mcp::{McpCalls, McpClient, McpSteps, ThirdParty};
pub use model::{ModelSteps, Pricing};
pub use runner::{CATCH_UP, RunEnds, Runner, RunnerConfig};
pub use schedule::{LONGEST_SLEEP, Scheduler};
pub use steps::StepNeeds;
pub use teams::TeamsCaughtUp;
