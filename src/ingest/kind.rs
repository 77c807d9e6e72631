//! The input kinds: the one list of what `sphragis load` accepts, with each kind's
//! ingest-log name, loader version and re-load policy.
//!
//! A loader version names the mapping from a kind's bytes to rows; bump it when the
//! mapping changes (it is recorded in `ingest_log.loader_version`).

/// What loading the same bytes of a kind again does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reload {
    /// Skipped as a duplicate: nothing is written, `sph_log` says so.
    Skipped,
    /// Applied again (a configuration re-registered: orgs, pools, split manifest), with
    /// `same_bytes_as` naming the earlier load.
    Reapplied,
    /// The path is part of what the file says (a SWE-bench `report.json` names its
    /// instance by its folder): the same bytes at another path are another input; at
    /// the same path they are skipped.
    BoundToPath,
}

/// Which corpus a kind feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corpus {
    /// Code-review refinement examples (SPEC §2).
    Review,
    /// SFT views and trajectories (SPEC §3).
    Sft,
}

/// Every input kind. The `clap` names are the command line's `load <KIND>` and the
/// `ingest_log.kind` values ([`InputKind::name`]); a test checks they agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum InputKind {
    /// sphragis review examples, JSONL (docs/formats.md).
    Examples,
    /// Review4Repair test_100.json (JSON array) or its rows as JSONL.
    #[value(name = "review4repair")]
    Review4Repair,
    /// Tufano et al. 2021 CSV (comment, before, before_marked, after).
    #[value(name = "tufano2021")]
    Tufano2021,
    /// Gerrit `gerrit query --format=JSON` output (change messages, patch sets).
    GerritQuery,
    /// Gerrit REST responses: `GET /changes/?q=...` (a ChangeInfo array) or
    /// `GET /changes/{id}/comments` (path → CommentInfo list), with or without `)]}'`.
    GerritRest,
    /// Per-org configuration: service accounts, windows, halves (docs/formats.md).
    Orgs,
    /// Label-audit items, JSONL (docs/formats.md).
    Labels,
    /// SFT views: token ids + loss mask (or HF labels / TRL assistant_masks), JSONL or
    /// Parquet (a file, or a folder / glob of shards).
    Views,
    /// Agent trajectories: mini-swe-agent .traj.json, SWE-agent .traj, OpenHands / nebius /
    /// SWE-smith rows (JSON arrays, or Parquet with a `messages` column as Hugging Face
    /// writes it), LLaMA-Factory JSONL, ATIF trajectory.json, Inspect AI .eval / .json logs
    /// (format detected from content).
    Trajectories,
    /// SWE-bench report.json evaluator outcomes (one instance per file; the only way an
    /// outcome enters the database).
    Outcomes,
    /// SFT pool roles: repair / recovery / report, label subsets (JSON; docs/formats.md).
    Pools,
    /// SFT split manifest and protected families (JSON; docs/formats.md).
    Manifest,
    /// Evaluator samples database (SQLite; its bytes are hashed and opened in memory).
    Samples,
    /// An evaluation run: `load run NAME --model M FILES/DIRS...` — trajectories,
    /// per-instance and run-level reports, batch exit statuses (docs/formats.md).
    Run,
}

impl InputKind {
    /// Every kind, in the order `load --help` lists them.
    pub const ALL: [InputKind; 14] = [
        Self::Examples,
        Self::Review4Repair,
        Self::Tufano2021,
        Self::GerritQuery,
        Self::GerritRest,
        Self::Orgs,
        Self::Labels,
        Self::Views,
        Self::Trajectories,
        Self::Outcomes,
        Self::Pools,
        Self::Manifest,
        Self::Samples,
        Self::Run,
    ];

    /// The name used on the command line and in `ingest_log.kind`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Examples => "examples",
            Self::Review4Repair => "review4repair",
            Self::Tufano2021 => "tufano2021",
            Self::GerritQuery => "gerrit-query",
            Self::GerritRest => "gerrit-rest",
            Self::Orgs => "orgs",
            Self::Labels => "labels",
            Self::Views => "views",
            Self::Trajectories => "trajectories",
            Self::Outcomes => "outcomes",
            Self::Pools => "pools",
            Self::Manifest => "manifest",
            Self::Samples => "samples",
            Self::Run => "run",
        }
    }

    /// What one record of this kind is called in progress lines ("loading F: 120 views").
    pub fn record_noun(self) -> &'static str {
        match self {
            Self::Examples | Self::Review4Repair | Self::Tufano2021 => "examples",
            Self::GerritQuery | Self::GerritRest => "records",
            Self::Orgs => "orgs",
            Self::Labels => "labels",
            Self::Views => "views",
            Self::Trajectories => "trajectories",
            Self::Outcomes => "reports",
            Self::Pools => "pools",
            Self::Manifest => "instances",
            Self::Samples => "samples",
            Self::Run => "files",
        }
    }

    /// The kind named `name` (as recorded in the ingest log), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The loader version recorded in `ingest_log.loader_version`.
    pub fn loader_version(self) -> &'static str {
        match self {
            // 2: a comment's `robot_id` is kept (a robot comment, issue 28)
            Self::Examples => "examples/2",
            // 2: the deletion marker `<|del|>` is the empty target (issue 10)
            Self::Review4Repair => "review4repair/2",
            Self::Tufano2021 => "tufano2021/1",
            Self::GerritQuery => "gerrit-query/1",
            // 2: RobotCommentInfo.robot_id is kept (GET /changes/{id}/robotcomments, issue 28)
            Self::GerritRest => "gerrit-rest/2",
            Self::Orgs => "orgs/1",
            Self::Labels => "labels/1",
            Self::Views => "views/1",
            // 2: a mini-swe-agent trajectory no longer takes `resolved` from a report.json
            // beside it (outcomes enter only through `load outcomes`)
            // 3: sft_commands.call_index is the index of the tool call the command
            // comes from (was its ordinal among the message's shell commands)
            // 4: several trajectories of one instance are kept as attempts (issue 27),
            // keyed '<instance>#<attempt>' after the first, no longer refused as repeats
            // 5: an Inspect AI epoch is an attempt of its sample (epoch n: attempt n - 1),
            // no longer an instance '<id>@epoch<n>'; Inspect's text_editor writes files
            Self::Trajectories => "trajectories/5",
            Self::Outcomes => "outcomes/1",
            Self::Pools => "pools/1",
            Self::Manifest => "manifest/1",
            Self::Samples => "samples/1",
            // 2: Inspect AI logs (.eval, .json), one run per epoch
            Self::Run => "run/2",
        }
    }

    /// What loading the same bytes again does.
    pub fn reload(self) -> Reload {
        match self {
            Self::Orgs | Self::Pools | Self::Manifest => Reload::Reapplied,
            // a /comments response names its change only by the file name; a run's
            // report.json names its instance by its folder, like outcomes
            Self::Outcomes | Self::GerritRest | Self::Run => Reload::BoundToPath,
            _ => Reload::Skipped,
        }
    }

    /// The corpus the kind feeds.
    pub fn corpus(self) -> Corpus {
        match self {
            Self::Examples
            | Self::Review4Repair
            | Self::Tufano2021
            | Self::GerritQuery
            | Self::GerritRest
            | Self::Orgs
            | Self::Labels => Corpus::Review,
            _ => Corpus::Sft,
        }
    }
}

impl std::fmt::Display for InputKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn command_line_names_are_the_ingest_log_names() {
        for kind in InputKind::ALL {
            let value = kind.to_possible_value().expect("every kind is listed");
            assert_eq!(value.get_name(), kind.name());
            assert_eq!(InputKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(InputKind::value_variants().len(), InputKind::ALL.len());
        assert_eq!(InputKind::from_name("gerrit_query"), None);
    }

    #[test]
    fn reload_policies() {
        let reapplied: Vec<&str> =
            InputKind::ALL.into_iter().filter(|k| k.reload() == Reload::Reapplied).map(InputKind::name).collect();
        assert_eq!(reapplied, ["orgs", "pools", "manifest"]);
        assert_eq!(InputKind::Outcomes.reload(), Reload::BoundToPath);
        assert_eq!(InputKind::Views.reload(), Reload::Skipped);
        let review: Vec<&str> =
            InputKind::ALL.into_iter().filter(|k| k.corpus() == Corpus::Review).map(InputKind::name).collect();
        assert_eq!(
            review,
            ["examples", "review4repair", "tufano2021", "gerrit-query", "gerrit-rest", "orgs", "labels"]
        );
    }
}
