//! Inspect AI logs as evaluation runs (issue 27): a `.eval` archive or a `.json` log given
//! to `load run`, read once by the SFT reader ([`crate::sft::formats::inspect`]: the
//! same trajectories, the same verdicts) with what a run needs beside each sample.
//!
//! * **Epochs are repeats.** Inspect runs every sample once per epoch, independently:
//!   the run model's independent repeats are runs of one model and harness that continue
//!   no other (`eval_repeat_instances_v3`, `eval_pass_k_v1`). So epoch 1 of a log loaded
//!   as run `NAME` is run `NAME`, and epoch `n` > 1 is run `NAME@epoch<n>` ([`epoch_run`]),
//!   each with the load's model, harness and runaway N; a log of several epochs is a group
//!   of repeats whose pass@k the views give. A run continues one run, so `--continues`
//!   with a log of several epochs is refused (by the loader).
//! * **Outcome** per sample and epoch ([`outcome`]): the sample's `error` (it failed: its
//!   solver, sandbox or model call raised) is an evaluator `error`, its message the
//!   reason, never a failure of the model; else the scores' verdict as the SFT reader
//!   derives it ([`crate::sft::formats::inspect::declared_resolved`]) is `resolved` or
//!   `unresolved`, of shape `trajectory` (the log's own verdict); scores without a
//!   verdict (scorers that disagree, `"P"` partial, `NaN` unscored) give no outcome: the
//!   instance is left out of the graded denominator as `no_outcome`.
//! * **Exit status**: `<type> limit` when a limit stopped the sample (`token limit`,
//!   `message limit`, `time limit`, ...: a `limit` finish); none otherwise (the finish
//!   is then read from the messages: a `submit` call is natural).
//! * **Refused**, naming the file and the field: an archive without `header.json` (a run
//!   still being written, or cut off: its samples are not all there), and a sample with
//!   no score and no error (a log written with `--no-score`: `inspect score` it first).

use super::files::Status;
use crate::ingest::InputError;
use crate::sft::formats::access::join;
use crate::sft::formats::inspect::{LogRead, SampleRead};
use crate::sft::schema::Trajectory;
use anyhow::Result;
use std::path::Path;

/// One sample of an Inspect log as a run keeps it.
#[derive(Debug)]
pub struct RunSample {
    /// The run its epoch belongs to ([`epoch_run`]).
    pub run: String,
    /// The sample's trajectory (instance: the sample `id`).
    pub trajectory: Trajectory,
    /// `<type> limit` when a limit stopped the sample, else `None`.
    pub exit_status: Option<String>,
    /// The outcome the log states and its reason ([`outcome`]); `None`: no verdict.
    pub outcome: Option<(Status, Option<String>)>,
}

/// The run that epoch `epoch` of a log loaded as run `run` goes to: `run` for epoch 1,
/// `<run>@epoch<n>` for epoch `n` > 1 (e.g. `calc@epoch2`).
pub fn epoch_run(run: &str, epoch: u64) -> String {
    if epoch <= 1 { run.to_string() } else { format!("{run}@epoch{epoch}") }
}

/// The outcome a sample states: its `error` → [`Status::Error`] with the error's message
/// as the reason; else its scores' verdict → [`Status::Resolved`] / [`Status::Unresolved`];
/// `None` when the scores give no verdict.
pub fn outcome(sample: &SampleRead) -> Option<(Status, Option<String>)> {
    if let Some(message) = &sample.error {
        return Some((Status::Error, Some(message.clone())));
    }
    sample.trajectory.resolved.map(|r| (if r { Status::Resolved } else { Status::Unresolved }, None))
}

/// The samples of the log `path` (read by the SFT reader) as run `run` keeps them, in the
/// log's order.
///
/// Errors (file and field): an archive without `header.json`; a sample with neither a
/// score nor an error, named at its `scores` (`run.eval/samples/7_epoch_1.json: field
/// `scores``, `log.json: field `samples[1].scores``).
pub fn run_samples(path: &Path, run: &str, log: LogRead) -> Result<Vec<RunSample>> {
    if !log.finished {
        return Err(InputError::at(
            path,
            None,
            Some("header.json"),
            "missing: the archive has no header.json (a run still being written, or cut off); a run needs the \
             finished log",
        )
        .into());
    }
    let mut out = Vec::with_capacity(log.samples.len());
    for s in log.samples {
        if !s.scored && s.error.is_none() {
            return Err(InputError::at(
                &s.file,
                None,
                Some(&join(&s.at, "scores")),
                format!(
                    "missing: sample {} (epoch {}) has no score and no error (a log written with --no-score: \
                     score it with `inspect score` first)",
                    s.trajectory.instance_id, s.epoch
                ),
            )
            .into());
        }
        let outcome = outcome(&s);
        out.push(RunSample {
            run: epoch_run(run, s.epoch),
            exit_status: s.limit.map(|kind| format!("{kind} limit")),
            trajectory: s.trajectory,
            outcome,
        })
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_name_their_runs() {
        assert_eq!(epoch_run("calc", 1), "calc");
        assert_eq!(epoch_run("calc", 2), "calc@epoch2");
        assert_eq!(epoch_run("calc", 12), "calc@epoch12");
    }
}
