//! The report catalogue: every name users type (`removals`) bound to one versioned view
//! (`refine_removals_v1`), in the order `report all` prints them, and the lookup by name.

use anyhow::{Context, Result};

/// A named report over one versioned view.
#[derive(Debug, Clone, Copy)]
pub struct Report {
    /// Name on the command line.
    pub name: &'static str,
    /// The versioned view it reads.
    pub view: &'static str,
    /// One line for `--help` and the table caption.
    pub about: &'static str,
    /// Whether the view has a `version` column that `--version` filters.
    pub by_version: bool,
    /// The table macro that computes the view's figures for other arguments (the view is
    /// `select * from <macro>(<default grid>)`); `None` for a report without parameters.
    pub macro_name: Option<&'static str>,
}

/// Every report, in the order `report all` prints them.
pub const REPORTS: &[Report] = &[
    Report {
        name: "checks",
        view: "check_findings_v1",
        about: "the verdict: every check of the default suite with its status (sphragis check judges and records it)",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "inputs",
        view: "ingest_files_v1",
        about: "input files bound to this database",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "removals",
        view: "refine_removals_v1",
        about: "removals by reason and org (first removing rule)",
        by_version: true,
        macro_name: None,
    },
    Report {
        name: "suggested-share",
        view: "suggested_edit_share_v1",
        about: "suggested-edit share per org and window, and its ratio to the training window",
        by_version: true,
        macro_name: None,
    },
    Report {
        name: "fences",
        view: "fence_agreement_v2",
        about: "strict fence rule vs Gerrit's substring test vs the loose pattern",
        by_version: true,
        macro_name: None,
    },
    Report {
        name: "target-in-comment",
        view: "target_in_comment_v2",
        about: "targets a reviewer typed into a comment (reported, not removed)",
        by_version: true,
        macro_name: None,
    },
    Report {
        name: "reconciliation",
        view: "reconciliation_v1",
        about: "base kept - removed + resurrected = kept, per org and window",
        by_version: true,
        macro_name: None,
    },
    Report {
        name: "suggested-share-halves",
        view: "suggested_edit_share_by_half_v1",
        about: "suggested-edit share per org, window and registered half, and its ratio to the training window",
        by_version: true,
        macro_name: None,
    },
    Report {
        name: "splits",
        view: "split_counts_v1",
        about: "kept examples per split (sealed window: count only)",
        by_version: true,
        macro_name: None,
    },
    Report {
        name: "suffix-mix",
        view: "half_suffix_mix_v1",
        about: "suffix mix of each registered half's training rows",
        by_version: true,
        macro_name: None,
    },
    Report {
        name: "criteria",
        view: "split_criteria_v1",
        about: "split criteria: half sizes, size floor, language-mix ceiling (TV distance), matched suffix",
        by_version: true,
        macro_name: None,
    },
    Report {
        name: "contract",
        view: "sft_contract_summary_v1",
        about: "SFT views: ids/mask contract pass/fail per pool and check",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "contract-failures",
        view: "sft_contract_failures_v1",
        about: "SFT views: every failing view with its check, position and reason",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "supervision",
        view: "sft_assistant_supervision_v1",
        about: "SFT assistant messages per view: trained, header_only (audit finding) or untrained",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "segments",
        view: "sft_segment_patterns_v2",
        about: "SFT segment-level mask audit per pool: header, thinking, text, tool call, end of turn, content — majority pattern and deviating views",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "segment-views",
        view: "sft_segment_supervision_v2",
        about: "SFT supervised tokens per view, role and segment, with the view's pattern (always / never / partly)",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "segment-deviations",
        view: "sft_segment_deviations_v2",
        about: "SFT views whose segment pattern deviates from their pool's majority, or whose segments are unknown",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "trajectories",
        view: "sft_trajectory_stats_v1",
        about: "SFT trajectories per source: messages, tool calls, bash and git-history commands",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "instances",
        view: "sft_instances_v1",
        about: "SFT per-instance table: pools, views, tokens, supervised tokens, tool calls, outcome",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "dedup",
        view: "sft_dedup_v1",
        about: "SFT training views under dedup modes none / exact / union: views, instances, exposure, positions",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "exposure",
        view: "sft_recovery_exposure_v1",
        about: "SFT recovery-region exposure and its share, before and after dedup; what the recovery pool adds",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "dedup-pools",
        view: "sft_dedup_exact_pools_v1",
        about: "SFT exact dedup per pool: copies removed, views remaining, subset views",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "priority",
        view: "sft_dedup_priority_v1",
        about: "SFT dedup priority(P) per repair pool: positions kept and dropped against the union",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "membership",
        view: "sft_membership_v1",
        about: "SFT labelled pools: share among training views before and after union dedup",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "concentration",
        view: "sft_recovery_concentration_v1",
        about: "SFT recovery pool: share of its supervised tokens in its k longest views",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "weights",
        view: "sft_weight_projection_v1",
        about: "SFT weight projection: total(w) = U + w|R|, region(w) = |R ∩ U| + w|R|",
        by_version: false,
        macro_name: Some("sft_weight_projection_at_v1"),
    },
    Report {
        name: "context",
        view: "sft_context_lengths_v1",
        about: "SFT context length per instance: P50, P90, max, count >= 32,768",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "isolation",
        view: "sft_isolation_v2",
        about: "SFT families: instances, views, and the exact intersection with the protected list",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "budget",
        view: "sft_budget_v1",
        about: "SFT training budget on the train split: views, exposure, updates per epoch, passes",
        by_version: false,
        macro_name: Some("sft_budget_at_v1"),
    },
    Report {
        name: "outcomes",
        view: "sft_outcome_distribution_v1",
        about: "SFT evaluator outcomes: resolved, fail-to-pass node distribution, median pass-to-pass",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "thinking",
        view: "sft_thinking_v2",
        about: "SFT thinking bodies: count, blank placeholders, length P50/P90/max, long-repetition candidates",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "tools",
        view: "sft_supervised_tools_v1",
        about: "SFT tool calls by class (all, and in supervised assistant messages), and the bash share of supervised calls",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "test-runs",
        view: "sft_test_runs_heuristic_v1",
        about: "SFT test runs per trajectory (HEURISTIC): first write, passes/fails, pass after last write, recovery window",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "recovery",
        view: "sft_recovery_windows_heuristic_v2",
        about: "SFT recovery windows (HEURISTIC): failing and passing runs, their commands, pass from a changed command",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "final-report",
        view: "sft_final_report_v1",
        about: "SFT final report per trajectory: supervised, masked or absent",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "expected-failures",
        view: "sft_expected_failures_heuristic_v1",
        about: "SFT report-only views citing an expected failure (HEURISTIC): needs review, with evidence",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "detail",
        view: "sft_instance_detail_v2",
        about: "SFT per-instance detail: every audit figure side by side (CSV for spreadsheets)",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "samples",
        view: "sft_samples_outcomes_v1",
        about: "SFT samples database: success and finish reason (natural / max_steps), median test nodes",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "report-only",
        view: "sft_report_only_v1",
        about: "SFT report-only views, listed apart from training",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "truncation",
        view: "sft_truncation_v1",
        about: "SFT truncation survival per pool: views over the length, supervised tokens lost, views left all-masked, trained messages cut, final reports lost",
        by_version: false,
        macro_name: Some("sft_truncation_at_v1"),
    },
    Report {
        name: "truncation-views",
        view: "sft_truncation_views_v1",
        about: "SFT truncation per view longer than the length: window kept, supervised kept and lost, messages cut, final report lost",
        by_version: false,
        macro_name: Some("sft_truncation_views_at_v1"),
    },
    Report {
        name: "eval-runs",
        view: "eval_runs_v2",
        about: "evaluation runs side by side: resolved k/n with Wilson 95%, finishes, outcomes explicit/implied/none, continued runs",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "eval-symptoms",
        view: "eval_symptoms_v1",
        about: "trajectory symptoms per run (HEURISTIC, not failure reasons): k of n with Wilson 95%, the instances",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "eval-pairs",
        view: "eval_pairs_v1",
        about: "two runs on their shared instances: both / only A / only B / neither, exact McNemar p",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "eval-pair-instances",
        view: "eval_pair_instances_v1",
        about: "two runs per shared instance: resolved by each, the cell",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "eval-repeats",
        view: "eval_repeats_v2",
        about: "independent repeats of one model and harness (continued runs excluded): resolve rate mean and spread, flips",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "eval-pass-at-k",
        view: "eval_pass_at_k_v2",
        about: "pass@k over independent repeats (unbiased estimator, Chen et al. 2021)",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "eval-instances",
        view: "eval_instances_v1",
        about: "per run and instance: outcome (explicit, implied or none), finish, batch exit-status history",
        by_version: false,
        macro_name: None,
    },
    Report {
        name: "labels",
        view: "label_audit_v1",
        about: "label audit: valid share per rater with n and a Wilson 95% interval",
        by_version: true,
        macro_name: None,
    },
    Report {
        name: "anomalies",
        view: "ingest_anomalies_v1",
        about: "values of loaded files accepted under the ingest anomaly policy: lone surrogates, NaN/Infinity, NUL, control characters (file, line, field)",
        by_version: false,
        macro_name: None,
    },
];

/// Finds a report by name. Errors list the known names.
pub fn find(name: &str) -> Result<&'static Report> {
    REPORTS.iter().find(|r| r.name == name).with_context(|| {
        let names: Vec<_> = REPORTS.iter().map(|r| r.name).collect();
        format!("unknown report {name:?}; reports: {}, all", names.join(", "))
    })
}
