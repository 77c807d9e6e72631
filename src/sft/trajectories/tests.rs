//! Tests of the trajectory formats on the public samples (`../shared`, `#[ignore]`d)
//! and on small files written here. Compiled only for tests (`mod tests` in
//! `trajectories.rs` is `#[cfg(test)]`); the marker below keeps `tests/tidy.rs`'s scan
//! of input reads out of this file, as it skips every inline test module.
//!
//! Over 800 lines on purpose: one file holds the format tests side by side (each format's
//! sample, its error cases and the shared detection table), so a change to one format is
//! checked against the others in one place.

use super::*;
use anyhow::{Result, anyhow};
#[cfg(test)]
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;

// The readers take the text the input layer read; these read a test file first.
fn text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))
}
fn read_mini_swe_agent(p: &Path) -> Result<Trajectory> {
    super::read_mini_swe_agent(p, &text(p)?)
}
fn read_swe_agent_traj(p: &Path) -> Result<Trajectory> {
    super::read_swe_agent_traj(p, &text(p)?)
}
fn read_openhands_rows(p: &Path) -> Result<Vec<Trajectory>> {
    super::read_openhands_rows(p, &text(p)?)
}
fn read_nebius_rows(p: &Path) -> Result<Vec<Trajectory>> {
    super::read_nebius_rows(p, &text(p)?)
}
fn read_swe_smith_rows(p: &Path) -> Result<Vec<Trajectory>> {
    super::read_swe_smith_rows(p, &text(p)?)
}
fn read_llamafactory_jsonl(p: &Path) -> Result<Vec<Trajectory>> {
    super::read_llamafactory_jsonl(p, &text(p)?)
}
fn detect_and_read(p: &Path) -> Result<Vec<Trajectory>> {
    super::detect_and_read(p, &text(p)?)
}
fn read_swebench_report(p: &Path) -> Result<Outcome> {
    super::read_swebench_report(p, &text(p)?)
}

/// The shared data folder: `SPHRAGIS_SHARED`, default `../shared` beside the repository.
fn shared() -> PathBuf {
    std::env::var_os("SPHRAGIS_SHARED")
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"), PathBuf::from)
}

fn sft(rel: &str) -> PathBuf {
    shared().join("data/sft").join(rel)
}

fn count_role(t: &Trajectory, role: Role) -> usize {
    t.messages.iter().filter(|m| m.role == role).count()
}

fn call_names(t: &Trajectory) -> Vec<&str> {
    t.messages.iter().flat_map(|m| m.tool_calls.iter().map(|c| c.name.as_str())).collect()
}

fn name_counts(t: &Trajectory) -> BTreeMap<&str, usize> {
    let mut m = BTreeMap::new();
    for n in call_names(t) {
        *m.entry(n).or_insert(0) += 1;
    }
    m
}

fn git_history_count(t: &Trajectory) -> usize {
    t.messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(bash_commands)
        .filter(|c| is_git_history_command(c))
        .count()
}

fn temp_file(name: &str, content: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("traj-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

// ---------------------------------------------------------------- mini-swe-agent

fn read_all_mini() -> Vec<Trajectory> {
    let root = sft("mini-swe-agent-gemini3pro/trajs");
    let mut ids: Vec<String> =
        std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    ids.sort();
    ids.iter().map(|id| read_mini_swe_agent(&root.join(id).join(format!("{id}.traj.json"))).unwrap()).collect()
}

/// The SWE-bench report of a mini-swe-agent instance, read explicitly (as `load
/// outcomes` does): the trajectory reader never looks for it.
fn mini_report(instance_id: &str) -> Outcome {
    read_swebench_report(&sft("mini-swe-agent-gemini3pro/logs").join(instance_id).join("report.json")).unwrap()
}

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn mini_swe_agent_totals() {
    let ts = read_all_mini();
    assert_eq!(ts.len(), 43);
    assert!(ts.iter().all(|t| t.source == SOURCE_MINI_SWE_AGENT && t.resolved.is_none()));
    let reports: Vec<Outcome> = ts.iter().map(|t| mini_report(&t.instance_id)).collect();
    assert_eq!(reports.iter().filter(|o| o.resolved).count(), 24);
    assert_eq!(reports.iter().filter(|o| !o.resolved).count(), 19);
    let msgs: Vec<&Message> = ts.iter().flat_map(|t| &t.messages).collect();
    assert_eq!(msgs.len(), 3612);
    let asst: Vec<&&Message> = msgs.iter().filter(|m| m.role == Role::Assistant).collect();
    assert_eq!(asst.len(), 1763);
    assert_eq!(msgs.iter().filter(|m| m.role == Role::User).count(), 1806);
    assert_eq!(msgs.iter().filter(|m| m.role == Role::System).count(), 43);
    let calls: usize = asst.iter().map(|m| m.tool_calls.len()).sum();
    assert_eq!(calls, 1829);
    assert!(asst.iter().flat_map(|m| &m.tool_calls).all(|c| c.name == "bash" && c.from_text && c.id.is_none()));
    // Every call's command is a bash command of the message.
    assert_eq!(asst.iter().map(|m| bash_commands(m).len()).sum::<usize>(), 1829);
    // Reasoning: present on 49 of 1763 assistant turns, longest 1,202 characters.
    let reasoning: Vec<&str> = asst.iter().filter_map(|m| m.reasoning.as_deref()).collect();
    assert_eq!(reasoning.len(), 49);
    assert!(reasoning.iter().all(|r| !r.trim().is_empty()));
    assert_eq!(reasoning.iter().map(|r| r.chars().count()).max(), Some(1202));
    // Observations: 1,671 start with <returncode>; every final message is the diff.
    assert_eq!(msgs.iter().filter(|m| m.returncode.is_some()).count(), 1671);
    assert!(ts.iter().all(|t| t.messages.last().unwrap().text.starts_with("diff --git")));
    // History queries: 4 commands in 3 instances.
    let per: BTreeMap<&str, usize> =
        ts.iter().map(|t| (t.instance_id.as_str(), git_history_count(t))).filter(|(_, n)| *n > 0).collect();
    assert_eq!(
        per,
        BTreeMap::from([("django__django-13513", 1), ("django__django-14122", 1), ("sympy__sympy-13031", 2)])
    );
    // The four commands themselves.
    let cmds: Vec<String> = ts
        .iter()
        .flat_map(|t| t.messages.iter().flat_map(bash_commands))
        .filter(|c| is_git_history_command(c))
        .collect();
    assert_eq!(
        cmds,
        [
            "git log -n 1 django/views/debug.py",
            "git show 0ddb4ebf",
            "git log -n 5 sympy/matrices/common.py",
            "git show 2dff3502e99437c7b25720afb4f9bf7700329672"
        ]
    );
}

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn mini_swe_agent_matches_index_tsv() {
    let index = std::fs::read_to_string(sft("mini-swe-agent-gemini3pro/index.tsv")).unwrap();
    let mut lines = index.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let by_id: HashMap<String, Trajectory> = read_all_mini().into_iter().map(|t| (t.instance_id.clone(), t)).collect();
    let mut rows = 0;
    let mut nonzero_total = 0;
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        let id = f[col("instance_id")];
        let num = |c: &str| f[col(c)].parse::<usize>().unwrap();
        let t = by_id.get(id).unwrap_or_else(|| panic!("{id} not read"));
        let asst: Vec<&Message> = t.messages.iter().filter(|m| m.role == Role::Assistant).collect();
        assert_eq!(mini_report(id).resolved, f[col("resolved")] == "True", "{id} resolved");
        assert_eq!(t.messages.len(), num("messages"), "{id} messages");
        assert_eq!(asst.len(), num("assistant_turns"), "{id} assistant_turns");
        assert_eq!(
            asst.iter().map(|m| m.tool_calls.len()).sum::<usize>(),
            num("bash_code_blocks"),
            "{id} bash_code_blocks"
        );
        assert_eq!(git_history_count(t), num("git_history_commands"), "{id} git_history_commands");
        let nonzero = t.messages.iter().filter(|m| m.returncode.is_some_and(|r| r != 0)).count();
        assert_eq!(nonzero, num("nonzero_returncodes"), "{id} nonzero_returncodes");
        let max_reasoning = asst.iter().filter_map(|m| m.reasoning.as_ref()).map(|r| r.chars().count()).max();
        assert_eq!(max_reasoning.unwrap_or(0), num("max_reasoning_chars"), "{id} max_reasoning_chars");
        nonzero_total += nonzero;
        rows += 1;
    }
    assert_eq!(rows, 43);
    assert_eq!(nonzero_total, 158);
}

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn swebench_reports() {
    let logs = sft("mini-swe-agent-gemini3pro/logs");
    let o = read_swebench_report(&logs.join("django__django-13513/report.json")).unwrap();
    assert_eq!(
        o,
        Outcome {
            resolved: false,
            patch_applied: Some(true),
            patch_is_none: Some(false),
            infra_failure: None,
            infra_failure_reason: None,
            graded: true,
            fail_to_pass: TestCounts { success: 0, failure: 1 },
            pass_to_pass: TestCounts { success: 83, failure: 0 },
            fail_to_fail: Some(TestCounts::default()),
            pass_to_fail: Some(TestCounts::default()),
        }
    );
    let o = read_swebench_report(&logs.join("astropy__astropy-13977/report.json")).unwrap();
    assert_eq!(
        (o.fail_to_pass, o.pass_to_pass),
        (TestCounts { success: 12, failure: 8 }, TestCounts { success: 318, failure: 4 })
    );
    // Over the 43: resolved ⇔ every F2P and P2P test passed.
    let ts = read_all_mini();
    let reports: Vec<Outcome> = ts.iter().map(|t| mini_report(&t.instance_id)).collect();
    for (t, o) in ts.iter().zip(&reports) {
        let all_pass = o.fail_to_pass.failure == 0 && o.pass_to_pass.failure == 0 && o.fail_to_pass.success > 0;
        assert_eq!(o.resolved, all_pass, "{}", t.instance_id);
    }
    let f2p: usize = reports.iter().map(|o| o.fail_to_pass.success).sum();
    let f2p_fail: usize = reports.iter().map(|o| o.fail_to_pass.failure).sum();
    assert_eq!((f2p, f2p_fail), (43, 51));
    // The harness's nested layout {"<id>": {...}} reads the same.
    let nested = temp_file(
        "nested_report.json",
        r#"{"x__y-1": {"resolved": true, "tests_status": {"FAIL_TO_PASS": {"success": ["a", "b"], "failure": []}, "PASS_TO_PASS": {"success": ["c"], "failure": ["d"]}}}}"#,
    );
    let o = read_swebench_report(&nested).unwrap();
    assert!(o.resolved && o.patch_applied.is_none() && o.fail_to_fail.is_none());
    assert_eq!((o.fail_to_pass.success, o.pass_to_pass.failure), (2, 1));
}

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn mini_swe_agent_reader_never_reads_the_report_beside_it() {
    // In the SWE-bench folder layout, with logs/<id>/report.json present (resolved),
    // the trajectory's `resolved` stays unknown: the outcome is an input of its own.
    let id = "pytest-dev__pytest-7432";
    assert!(mini_report(id).resolved);
    let t = read_mini_swe_agent(&sft(&format!("mini-swe-agent-gemini3pro/trajs/{id}/{id}.traj.json"))).unwrap();
    assert_eq!((t.resolved, t.messages.len()), (None, 72));
}

// ---------------------------------------------------------------- SWE-agent

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn swe_agent_function_calling_simple() {
    let t = read_swe_agent_traj(&sft("swe-agent/trajectories/demonstrations/function_calling_simple.traj")).unwrap();
    assert_eq!((t.instance_id.as_str(), t.source, t.resolved), ("function_calling_simple", SOURCE_SWE_AGENT, None));
    assert_eq!(t.messages.len(), 12);
    assert_eq!([Role::System, Role::User, Role::Assistant, Role::Tool].map(|r| count_role(&t, r)), [1, 1, 5, 5]);
    assert_eq!(call_names(&t), ["find_file", "open", "edit", "bash", "submit"]);
    assert!(
        t.messages
            .iter()
            .flat_map(|m| &m.tool_calls)
            .all(|c| !c.from_text && c.id.as_deref().is_some_and(|i| i.starts_with("call_")))
    );
    let tool_names: Vec<_> =
        t.messages.iter().filter(|m| m.role == Role::Tool).map(|m| m.tool_name.as_deref().unwrap()).collect();
    assert_eq!(tool_names, ["find_file", "open", "edit", "bash", "submit"]);
    assert_eq!(t.messages[3].tool_call_id.as_deref(), Some("call_PbWErNIge3YTrli3fiVvmIid"));
    assert_eq!(t.messages[2].tool_calls[0].arguments, serde_json::json!({"file_name": "missing_colon.py"}));
    assert_eq!(t.messages[10].tool_calls[0].arguments, serde_json::json!({}));
    let cmds: Vec<String> = t.messages.iter().flat_map(bash_commands).collect();
    assert_eq!(cmds, ["python tests/missing_colon.py"]);
    assert!(t.messages[11].text.starts_with("\r\ndiff --git"));
}

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn swe_agent_marshmallow_replay() {
    let t = read_swe_agent_traj(&sft(
        "swe-agent/trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_replace_from_source/marshmallow-code__marshmallow-1867.traj",
    ))
    .unwrap();
    assert_eq!(t.instance_id, "marshmallow-code__marshmallow-1867");
    assert_eq!(t.messages.len(), 28);
    assert_eq!([Role::System, Role::User, Role::Assistant, Role::Tool].map(|r| count_role(&t, r)), [1, 1, 13, 13]);
    assert_eq!(
        name_counts(&t),
        BTreeMap::from([
            ("bash", 6),
            ("create", 1),
            ("edit", 1),
            ("find_file", 1),
            ("insert", 1),
            ("open", 2),
            ("submit", 1)
        ])
    );
    let cmds: Vec<String> = t.messages.iter().flat_map(bash_commands).collect();
    assert_eq!(
        cmds,
        ["ls -F", "pip install -e .[dev]", "python reproduce.py", "ls -F", "python reproduce.py", "rm reproduce.py"]
    );
    assert!(
        t.messages.iter().filter(|m| m.role == Role::Tool).all(|m| m.tool_name.is_some() && m.tool_call_id.is_some())
    );
    assert!(t.messages.iter().any(|m| m.text.contains('\u{8}')), "backspaces from pip spinners are kept");
    assert!(t.messages[27].text.contains("diff --git a/src/marshmallow/fields.py"));
}

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn swe_agent_pydicom_text_commands() {
    let p = sft(
        "swe-agent/tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj",
    );
    let t = read_swe_agent_traj(&p).unwrap();
    assert_eq!(t.instance_id, "pydicom__pydicom-1458");
    assert_eq!(t.messages.len(), 26);
    assert_eq!([Role::System, Role::User, Role::Assistant, Role::Tool].map(|r| count_role(&t, r)), [1, 13, 12, 0]);
    assert_eq!(
        call_names(&t),
        ["create", "edit", "python", "find_file", "open", "edit", "edit", "edit", "edit", "python", "rm", "submit"]
    );
    assert!(t.messages.iter().flat_map(|m| &m.tool_calls).all(|c| c.from_text && c.id.is_none()));
    assert_eq!(
        t.messages[11].tool_calls[0].arguments,
        serde_json::json!({"command": "open pydicom/pixel_data_handlers/numpy_handler.py 293"})
    );
    let cmds: Vec<String> = t.messages.iter().flat_map(bash_commands).collect();
    assert_eq!(cmds, ["python reproduce_bug.py", "python reproduce_bug.py", "rm reproduce_bug.py"]);
    // SWE-agent's fenced-block parser recovers the recorded `action` from the text.
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let mut checked = 0;
    for (m, h) in t.messages.iter().zip(raw["history"].as_array().unwrap()) {
        if m.role == Role::Assistant {
            assert_eq!(swe_agent_text_action(&m.text), h["action"].as_str(), "history[{}]", m.index);
            checked += 1;
        }
    }
    assert_eq!(checked, 12);
}

// ---------------------------------------------------------------- ADP row samples

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn openhands_rows() {
    let ts = read_openhands_rows(&sft("swe-gym-openhands-trajectories/sample_raw.json")).unwrap();
    assert_eq!(ts.len(), 5);
    assert_eq!(ts.iter().map(|t| t.messages.len()).sum::<usize>(), 188);
    assert_eq!(ts.iter().map(|t| t.messages.len()).collect::<Vec<_>>(), [41, 23, 26, 37, 61]);
    assert!(ts.iter().all(|t| t.resolved == Some(true) && t.source == SOURCE_OPENHANDS));
    assert_eq!(ts[0].instance_id, "python__mypy-15976_0");
    for t in &ts {
        let names: Vec<&str> = t
            .tools
            .as_ref()
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["execute_bash", "finish", "str_replace_editor"]);
        // Every tool message answers an earlier call and carries its name.
        let mut ids = HashMap::new();
        for m in &t.messages {
            for c in &m.tool_calls {
                ids.insert(c.id.clone().unwrap(), c.name.clone());
            }
            if m.role == Role::Tool {
                assert_eq!(
                    ids.get(m.tool_call_id.as_ref().unwrap()),
                    m.tool_name.as_ref(),
                    "{} [{}]",
                    t.instance_id,
                    m.index
                );
            }
        }
        assert!(t.messages.iter().all(|m| m.reasoning.is_none() && m.train.is_none()));
    }
    // Parallel calls: rows 0 and 2 only.
    let parallel: Vec<Vec<(usize, usize)>> = ts
        .iter()
        .map(|t| t.messages.iter().filter(|m| m.tool_calls.len() > 1).map(|m| (m.index, m.tool_calls.len())).collect())
        .collect();
    assert_eq!(parallel, [vec![(16, 2), (19, 2), (22, 2), (25, 4)], vec![], vec![(8, 2)], vec![], vec![]]);
    // Calls by tool, per row.
    let counts: Vec<BTreeMap<&str, usize>> = ts.iter().map(name_counts).collect();
    assert_eq!(counts[0], BTreeMap::from([("execute_bash", 5), ("finish", 1), ("str_replace_editor", 15)]));
    assert_eq!(counts[4], BTreeMap::from([("execute_bash", 7), ("str_replace_editor", 22)]));
    assert_eq!(ts.iter().map(|t| call_names(t).len()).sum::<usize>(), 87);
    assert_eq!(ts.iter().map(|t| count_role(t, Role::Tool)).sum::<usize>(), 82);
    let bash: usize = ts.iter().flat_map(|t| &t.messages).map(|m| bash_commands(m).len()).sum();
    assert_eq!(bash, 22);
    // "The agent itself never runs pytest in these 5 rows."
    assert!(!ts.iter().flat_map(|t| &t.messages).flat_map(bash_commands).any(|c| c.contains("pytest")));
    // A tool error followed by a corrected call.
    assert!(
        ts[0].messages[3].text.contains("The `view_range` parameter is not allowed when `path` points to a directory")
    );
    assert_eq!(ts[0].messages[2].tool_calls[0].arguments["view_range"], serde_json::json!([0, -1]));
}

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn nebius_rows() {
    let ts = read_nebius_rows(&sft("nebius-swe-agent-trajectories/sample_raw.json")).unwrap();
    assert_eq!(ts.len(), 5);
    assert_eq!(ts.iter().map(|t| t.messages.len()).collect::<Vec<_>>(), [13, 29, 11, 17, 33]);
    assert_eq!(ts.iter().map(|t| t.messages.len()).sum::<usize>(), 103);
    assert!(ts.iter().all(|t| t.resolved == Some(true) && t.source == SOURCE_NEBIUS));
    assert_eq!(ts[1].instance_id, "tempoCollaboration__OQuPy-74_55");
    let all: Vec<&Message> = ts.iter().flat_map(|t| &t.messages).collect();
    // mask true on every ai row, false elsewhere; train follows mask.
    assert!(all.iter().all(|m| m.mask == Some(m.role == Role::Assistant) && m.train == m.mask));
    assert_eq!(all.iter().filter(|m| m.role == Role::Assistant).count(), 49);
    // The system row's text is its system_prompt.
    assert!(ts.iter().all(|t| t.messages[0].role == Role::System
        && t.messages[0].text.starts_with("SETTING: You are an autonomous programmer")));
    // Every ai message carries exactly one recognizable command; each run ends with submit.
    assert!(
        all.iter().filter(|m| m.role == Role::Assistant).all(|m| m.tool_calls.len() == 1 && m.tool_calls[0].from_text)
    );
    assert!(ts.iter().all(|t| call_names(t).last() == Some(&"submit")));
    assert_eq!(call_names(&ts[0]), ["ls", "find_file", "open", "edit", "python", "submit"]);
    assert_eq!(
        name_counts(&ts[1]),
        BTreeMap::from([
            ("create", 1),
            ("edit", 4),
            ("find_file", 1),
            ("open", 1),
            ("python", 4),
            ("rm", 2),
            ("submit", 1)
        ])
    );
    assert_eq!(
        ts[0].messages[8].tool_calls[0].arguments["command"],
        "edit 5:5\nimport plumbum.cli as cli\nend_of_edit"
    );
    let shell: Vec<String> = ts[4].messages.iter().flat_map(bash_commands).collect();
    assert_eq!(shell.len(), 5);
    assert_eq!(shell[0], "treon path1 path2 --threads=2");
    // OQuPy: a fix that fails twice (tracebacks) before the script passes.
    let tracebacks = ts[1].messages.iter().filter(|m| m.role == Role::User && m.text.contains("Traceback")).count();
    assert!(tracebacks >= 2, "{tracebacks}");
}

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn swe_smith_rows() {
    let ts = read_swe_smith_rows(&sft("swe-smith-trajectories/sample_raw.json")).unwrap();
    assert_eq!(ts.len(), 5);
    assert_eq!(ts.iter().map(|t| t.messages.len()).collect::<Vec<_>>(), [31, 47, 37, 45, 77]);
    assert_eq!(ts.iter().map(|t| t.messages.len()).sum::<usize>(), 237);
    assert!(ts.iter().all(|t| t.resolved == Some(true) && t.source == SOURCE_SWE_SMITH));
    assert_eq!(ts[0].instance_id, "arrow-py__arrow.1d70d009.lm_rewrite__nuzjfyur");
    // One call per assistant message.
    assert!(ts.iter().flat_map(|t| &t.messages).filter(|m| m.role == Role::Assistant).all(|m| m.tool_calls.len() == 1));
    let totals = ts.iter().fold(BTreeMap::new(), |mut acc, t| {
        for (k, v) in name_counts(t) {
            *acc.entry(k).or_insert(0) += v;
        }
        acc
    });
    assert_eq!(totals, BTreeMap::from([("bash", 44), ("str_replace_editor", 63), ("submit", 9)]));
    // submit twice in 4 of 5 rows.
    let submits: Vec<usize> = ts.iter().map(|t| name_counts(t).get("submit").copied().unwrap_or(0)).collect();
    assert_eq!(submits, [2, 2, 2, 1, 2]);
    // Observations start with "OBSERVATION:", except the answer to the final submit
    // in 4 rows ("Your command ran successfully and did not produce any output.") and
    // one getmoto observation spelled "Observation:".
    let odd: Vec<(usize, usize)> = ts
        .iter()
        .enumerate()
        .flat_map(|(r, t)| {
            t.messages[2..]
                .iter()
                .filter(|m| m.role == Role::User && !m.text.starts_with("OBSERVATION:"))
                .map(move |m| (r, m.index))
        })
        .collect();
    assert_eq!(odd, [(0, 29), (1, 45), (2, 35), (4, 3), (4, 75)]);
    assert!(ts[4].messages[3].text.starts_with("Observation: /testbed/docs/conf.py"));
    // Only the getmoto row runs pytest.
    let pytest: Vec<&str> = ts
        .iter()
        .filter(|t| t.messages.iter().flat_map(bash_commands).any(|c| c.contains("pytest")))
        .map(|t| t.instance_id.as_str())
        .collect();
    assert_eq!(pytest, ["getmoto__moto.694ce1f4.pr_6055"]);
    let first = &ts[0].messages[2].tool_calls[0];
    assert_eq!(
        first.arguments,
        serde_json::json!({"command": r#"find /testbed -type f -name "*.py" | grep -v "__pycache__" | sort"#})
    );
    assert_eq!(
        ts[0].messages[4].tool_calls[0].arguments,
        serde_json::json!({"command": "view", "path": "/testbed/arrow/arrow.py"})
    );
}

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn llamafactory_rows() {
    let ts = read_llamafactory_jsonl(&sft("llamafactory-demo/reason_tool_use_demo_50.jsonl")).unwrap();
    assert_eq!(ts.len(), 50);
    assert_eq!(ts[0].instance_id, "reason_tool_use_demo_50:0");
    assert_eq!(ts[49].instance_id, "reason_tool_use_demo_50:49");
    let all: Vec<&Message> = ts.iter().flat_map(|t| &t.messages).collect();
    assert_eq!(all.len(), 274);
    let roles =
        [Role::System, Role::User, Role::Assistant, Role::Tool].map(|r| all.iter().filter(|m| m.role == r).count());
    assert_eq!(roles, [50, 70, 112, 42]);
    let reasoning: Vec<&str> = all.iter().filter_map(|m| m.reasoning.as_deref()).collect();
    assert_eq!(reasoning.len(), 112);
    assert!(all.iter().filter(|m| m.reasoning.is_some()).all(|m| m.role == Role::Assistant));
    let long: Vec<usize> = reasoning.iter().map(|r| r.chars().count()).filter(|&n| n >= 3000).collect();
    assert_eq!(long, [3395]);
    assert_eq!(all.iter().map(|m| m.tool_calls.len()).sum::<usize>(), 68);
    assert!(all.iter().flat_map(|m| &m.tool_calls).all(|c| !c.from_text && c.arguments.is_object()));
    // 221 text parts: one per message that has one (every non-assistant message, 59 assistant).
    assert_eq!(all.iter().filter(|m| !m.text.is_empty()).count(), 221);
    // No loss_weight in this file; LLaMA-Factory's default supervises assistant only.
    assert!(all.iter().all(|m| m.loss_weight.is_none() && m.train == Some(m.role == Role::Assistant)));
    assert!(ts.iter().all(|t| t.tools.as_ref().is_some_and(Value::is_array)));
    assert_eq!(ts[0].tools.as_ref().unwrap()[0]["function"]["name"], "get_device_asset_by_identifier");
    assert!(all.iter().all(|m| bash_commands(m).is_empty()));
}

#[test]
fn llamafactory_loss_weight_and_errors() {
    let p = temp_file(
        "lf.jsonl",
        concat!(
            r#"{"messages": [{"role": "user", "content": [{"type": "text", "value": "hi"}], "loss_weight": 0.5}, {"role": "assistant", "content": [{"type": "reasoning", "value": ""}, {"type": "text", "value": "a"}], "loss_weight": 0.0}]}"#,
            "\r\n\r\n",
            r#"{"messages": [{"role": "assistant", "content": [{"type": "tool_call", "value": "{\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 1}\"}"}]}]}"#,
            "\n"
        ),
    );
    let ts = read_llamafactory_jsonl(&p).unwrap();
    assert_eq!(ts.len(), 2);
    assert_eq!(ts[1].instance_id, "lf:1");
    let m = &ts[0].messages;
    assert_eq!((m[0].loss_weight, m[0].train), (Some(0.5), Some(true)));
    assert_eq!((m[1].loss_weight, m[1].train, m[1].reasoning.as_deref()), (Some(0.0), Some(false), Some("")));
    assert_eq!(ts[1].messages[0].tool_calls[0].arguments, serde_json::json!({"x": 1}));

    let bad = temp_file(
        "lf_bad.jsonl",
        concat!(
            r#"{"messages": []}"#,
            "\n\n",
            r#"{"messages": [{"role": "user", "content": []}, {"role": "assistant", "content": [{"type": "tool_call", "value": "{\"name\": \"f\", "}]}]}"#,
            "\n"
        ),
    );
    let e = read_llamafactory_jsonl(&bad).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}:3: field `[1].messages[1].content[0].value`: not JSON: ", bad.display())),
        "{e}"
    );
    let bad =
        temp_file("lf_bad2.jsonl", r#"{"messages": [{"role": "user", "content": [{"type": "image", "value": "x"}]}]}"#);
    let e = read_llamafactory_jsonl(&bad).unwrap_err().to_string();
    assert_eq!(
        e,
        format!("{}:1: field `[0].messages[0].content[0].type`: unsupported part type \"image\"", bad.display())
    );
}

// ---------------------------------------------------------------- detection, errors

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn detect_and_read_every_format() {
    let cases: &[(&str, &str, usize, usize)] = &[
        (
            "mini-swe-agent-gemini3pro/trajs/django__django-14122/django__django-14122.traj.json",
            SOURCE_MINI_SWE_AGENT,
            1,
            80,
        ),
        ("swe-agent/trajectories/demonstrations/function_calling_simple.traj", SOURCE_SWE_AGENT, 1, 12),
        ("swe-gym-openhands-trajectories/sample_raw.json", SOURCE_OPENHANDS, 5, 188),
        ("nebius-swe-agent-trajectories/sample_raw.json", SOURCE_NEBIUS, 5, 103),
        ("swe-smith-trajectories/sample_raw.json", SOURCE_SWE_SMITH, 5, 237),
        ("llamafactory-demo/reason_tool_use_demo_50.jsonl", SOURCE_LLAMAFACTORY, 50, 274),
    ];
    for &(rel, source, n, msgs) in cases {
        let ts = detect_and_read(&sft(rel)).unwrap();
        assert_eq!(ts.len(), n, "{rel}");
        assert!(ts.iter().all(|t| t.source == source), "{rel}");
        assert_eq!(ts.iter().map(|t| t.messages.len()).sum::<usize>(), msgs, "{rel}");
    }
    // the trajectory alone: no outcome (its report.json is loaded as `outcomes`)
    let t = &detect_and_read(&sft(cases[0].0)).unwrap()[0];
    assert_eq!(t.resolved, None);
    assert_eq!(detect_and_read(&temp_file("empty.json", "[]")).unwrap().len(), 0);
    let e = detect_and_read(&temp_file("other.json", r#"{"a": 1}"#)).unwrap_err().to_string();
    assert!(e.contains("other.json: not a recognized trajectory format"), "{e}");
    let e = detect_and_read(&temp_file("garbage.json", "{not json")).unwrap_err().to_string();
    assert!(e.contains("garbage.json: not JSON: "), "{e}");
}

#[test]
fn errors_name_file_row_and_field() {
    let p = temp_file(
        "oh_bad.json",
        r#"[{"instance_id": "a", "messages": []}, {"instance_id": "b", "messages": [{"role": "user", "content": "x"},
           {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{\"a\": "}}]}]}]"#,
    );
    let e = read_openhands_rows(&p).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "{}:1: field `[1].messages[1].tool_calls[0].function.arguments`: not JSON: ",
            p.display()
        )),
        "{e}"
    );
    let p = temp_file("oh_bad2.json", r#"[{"instance_id": "a", "messages": [{"role": "robot", "content": "x"}]}]"#);
    let e = read_openhands_rows(&p).unwrap_err().to_string();
    assert_eq!(e, format!("{}:1: field `[0].messages[0].role`: unknown role \"robot\"", p.display()));
    let p = temp_file(
        "oh_bad3.json",
        r#"[{"instance_id": "a", "messages": [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "[1]"}}]}]}]"#,
    );
    let e = read_openhands_rows(&p).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}:1: field `[0].messages[0].tool_calls[0].function.arguments`: expected a JSON object, got an array",
            p.display()
        )
    );
    let p = temp_file(
        "neb_bad.json",
        r#"[{"instance_id": "a", "target": true, "trajectory": [{"role": "ai", "text": 5}]}]"#,
    );
    let e = read_nebius_rows(&p).unwrap_err().to_string();
    assert_eq!(
        e,
        format!("{}:1: field `[0].trajectory[0].text`: invalid type: integer `5`, expected a string", p.display())
    );
    let p = temp_file("smith_bad.json", r#"[{"resolved": true, "messages": []}]"#);
    let e = read_swe_smith_rows(&p).unwrap_err().to_string();
    assert_eq!(e, format!("{}:1: field `[0].instance_id`: missing", p.display()));
    let p = temp_file("x.traj.json", r#"{"instance_id": "x", "messages": [{"role": "assistant", "content": 3}]}"#);
    let e = read_mini_swe_agent(&p).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}: field `messages[0].content`: invalid type: integer `3`, expected a string or a list of parts",
            p.display()
        )
    );
    let p = temp_file("h.traj", r#"{"history": [{"role": "tool", "content": "x", "tool_call_ids": [1]}]}"#);
    let e = read_swe_agent_traj(&p).unwrap_err().to_string();
    assert_eq!(
        e,
        format!("{}: field `history[0].tool_call_ids[0]`: invalid type: integer `1`, expected a string", p.display())
    );
    let e = read_nebius_rows(Path::new("/nonexistent/file.json")).unwrap_err();
    assert!(format!("{e:#}").starts_with("/nonexistent/file.json: cannot read"), "{e:#}");
}

#[test]
fn array_row_errors_name_their_line() {
    // rows one a line after a blank line; the third row (line 4) has a bad role
    let row = |id: &str, role: &str| {
        format!(r#"{{"instance_id": "{id}", "tools": [], "messages": [{{"role": "{role}", "content": "x"}}]}}"#)
    };
    let text = format!("\n[{},\n{},\n{}]\n", row("a", "user"), row("b", "user"), row("c", "robot"));
    let e = super::detect_and_read(Path::new("rows.json"), &text).unwrap_err().to_string();
    assert_eq!(e, "rows.json:4: field `[2].messages[0].role`: unknown role \"robot\"");
    // and a byte-order mark in front changes nothing
    let e = super::detect_and_read(Path::new("rows.json"), &format!("\u{feff}{text}")).unwrap_err().to_string();
    assert!(e.starts_with("rows.json:4: "), "{e}");
}

#[test]
fn typed_records_refuse_arrays_for_objects_and_name_the_field() {
    let tool_call = |value: &str| {
        format!(
            r#"{{"messages": [{{"role": "assistant", "content": [{{"type": "tool_call", "value": {value:?}}}]}}]}}"#
        )
    };
    type Reader = fn(&Path) -> Result<Vec<Trajectory>>;
    let cases: &[(Reader, &str, String, &str)] = &[
        // a message written as an array is refused, never mapped onto the fields by position
        (
            read_openhands_rows,
            "oh_array_message.json",
            r#"[{"instance_id": "a", "messages": [["user", "x"]]}]"#.into(),
            "[0].messages[0]`: invalid type: array, expected an object",
        ),
        // a required field missing deep inside: named in the path, in the source's terms
        (
            read_openhands_rows,
            "oh_no_name.json",
            r#"[{"instance_id": "a", "messages": [{"role": "assistant", "tool_calls": [{"function": {}}]}]}]"#.into(),
            "[0].messages[0].tool_calls[0].function.name`: missing",
        ),
        // NaN where a string is needed is refused as such (it reads as null)
        (
            read_openhands_rows,
            "oh_nan_id.json",
            r#"[{"instance_id": NaN, "messages": []}]"#.into(),
            "[0].instance_id`: NaN in a text field (Python's json.dumps writes it for a float it \
             cannot represent; this field needs a finite value)",
        ),
        // a loss weight that is not a number, in JSON's words
        (
            read_llamafactory_jsonl,
            "lf_weight.jsonl",
            r#"{"messages": [{"role": "user", "content": [], "loss_weight": "x"}]}"#.into(),
            "[0].messages[0].loss_weight`: invalid type: string \"x\", expected a number",
        ),
        // a tool_call part whose value is a JSON array, and one without a name
        (
            read_llamafactory_jsonl,
            "lf_call_array.jsonl",
            tool_call("[1]"),
            "[0].messages[0].content[0].value`: invalid type: array, expected an object",
        ),
        (
            read_llamafactory_jsonl,
            "lf_call_nameless.jsonl",
            tool_call(r#"{"arguments": {}}"#),
            "[0].messages[0].content[0].value.name`: missing",
        ),
    ];
    for (read, name, text, expected) in cases {
        let p = temp_file(name, text);
        let e = read(&p).unwrap_err().to_string();
        assert_eq!(e, format!("{}:1: field `{expected}", p.display()));
    }
}

// ---------------------------------------------------------------- parsers

// ---------------------------------------------------------------- git history rule

#[test]
#[ignore = "reads ../shared (SPHRAGIS_SHARED); CI runs it with --include-ignored"]
fn git_history_on_every_format() {
    // History queries outside mini-swe-agent: none in these samples.
    let files = [
        "swe-agent/trajectories/demonstrations/function_calling_simple.traj",
        "swe-agent/trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_replace_from_source/marshmallow-code__marshmallow-1867.traj",
        "swe-agent/tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj",
        "swe-gym-openhands-trajectories/sample_raw.json",
        "nebius-swe-agent-trajectories/sample_raw.json",
        "swe-smith-trajectories/sample_raw.json",
        "llamafactory-demo/reason_tool_use_demo_50.jsonl",
    ];
    let mut texts = 0;
    for rel in files {
        let ts = detect_and_read(&sft(rel)).unwrap();
        assert_eq!(ts.iter().map(git_history_count).sum::<usize>(), 0, "{rel}");
        // The splitter survives arbitrary text (observations, diffs, prompts).
        for m in ts.iter().flat_map(|t| &t.messages) {
            let _ = is_git_history_command(&m.text);
            texts += 1;
        }
    }
    assert_eq!(texts, 12 + 28 + 26 + 188 + 103 + 237 + 274);
    for t in read_all_mini() {
        for m in &t.messages {
            let _ = is_git_history_command(&m.text);
        }
    }
}

/// mini-swe-agent 2.x, tool-calling model: three tool calls answered by `tool`
/// messages, one of them a test run, then the `exit` record (shape of its docs'
/// output-files page and v2 migration guide; written for this test).
const MINI_V2_TOOLCALLS: &str = r#"{
  "info": {"mini_version": "2.0.0", "exit_status": "Submitted", "submission": "diff --git a/x.py b/x.py"},
  "messages": [
{"role": "system", "content": "You are a helpful assistant that can interact with a computer."},
{"role": "user", "content": "Please solve this issue: x() returns None"},
{"role": "assistant", "content": "Let me look.", "tool_calls": [
  {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"cat x.py\"}"}}],
 "extra": {"response": {"choices": [{"message": {"reasoning": "read first"}}]}}},
{"role": "tool", "tool_call_id": "call_1", "content": "<returncode>0</returncode>\n<output>def x(): pass</output>"},
{"role": "assistant", "content": null, "tool_calls": [
  {"id": "call_2", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"sed -i 's/pass/return 1/' x.py\"}"}},
  {"id": "call_3", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"python -m pytest -q tests\"}"}}]},
{"role": "tool", "tool_call_id": "call_2", "content": "<returncode>0</returncode>\n<output></output>"},
{"role": "tool", "tool_call_id": "call_3", "content": "<returncode>0</returncode>\n<output>3 passed in 0.02s</output>"},
{"role": "exit", "content": "diff --git a/x.py b/x.py", "extra": {"exit_status": "Submitted", "submission": "diff --git a/x.py b/x.py"}}
  ],
  "trajectory_format": "mini-swe-agent-1.1",
  "instance_id": "demo__x-1"
}"#;

#[test]
fn mini_swe_agent_2_tool_calls_and_exit_message_load() {
    let p = temp_file("v2_toolcalls.traj.json", MINI_V2_TOOLCALLS);
    let ts = detect_and_read(&p).unwrap();
    assert_eq!(ts.len(), 1);
    let t = &ts[0];
    assert_eq!((t.instance_id.as_str(), t.source), ("demo__x-1", SOURCE_MINI_SWE_AGENT));
    // 7 chat messages; the exit record is not one
    let roles: Vec<&str> = t.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant", "tool", "tool"]);
    let calls: Vec<(Option<&str>, &str)> =
        t.messages.iter().flat_map(|m| &m.tool_calls).map(|c| (c.id.as_deref(), c.name.as_str())).collect();
    assert_eq!(calls, [(Some("call_1"), "bash"), (Some("call_2"), "bash"), (Some("call_3"), "bash")]);
    let commands: Vec<String> = t.messages.iter().flat_map(bash_commands).collect();
    assert_eq!(commands, ["cat x.py", "sed -i 's/pass/return 1/' x.py", "python -m pytest -q tests"]);
    assert_eq!(commands.iter().filter(|c| crate::sft::heuristics::is_test_command(c)).count(), 1);
    assert_eq!(t.messages[3].tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(t.messages[6].tool_name.as_deref(), Some("bash"));
    assert_eq!(t.messages[6].returncode, Some(0));
    assert_eq!(t.messages[2].reasoning.as_deref(), Some("read first"));
}

#[test]
fn mini_swe_agent_2_text_based_fence_is_mswea_bash_command() {
    let text = r#"{"trajectory_format": "mini-swe-agent-1.1", "instance_id": "demo__x-2", "info": {},
      "messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "THOUGHT: look\n\n```mswea_bash_command\nls -la\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>x.py</output>"},
        {"role": "assistant", "content": "```bash\necho example-in-prose\n```\n```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"},
        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted"}}]}"#;
    let t = &detect_and_read(&temp_file("v2_text.traj.json", text)).unwrap()[0];
    let commands: Vec<String> = t.messages.iter().flat_map(bash_commands).collect();
    // the 2.x fence only: a ```bash block is an example in prose there
    assert_eq!(commands, ["ls -la", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]);
    assert_eq!(t.messages.len(), 5);
    assert_eq!(t.messages[3].returncode, Some(0));
}

#[test]
fn mini_swe_agent_reader_refuses_unknown_trajectory_format() {
    let text = r#"{"trajectory_format": "mini-swe-agent-3", "messages": [], "info": {}}"#;
    let p = temp_file("v3.traj.json", text);
    let e = detect_and_read(&p).unwrap_err().to_string();
    assert!(e.contains("trajectory_format"), "{e}");
    assert!(e.contains(r#"unknown value "mini-swe-agent-3" (known: mini-swe-agent-1, mini-swe-agent-1.1)"#), "{e}");
    let e = read_mini_swe_agent(&p).unwrap_err().to_string();
    assert!(e.contains("unknown value"), "{e}");
    // a format that is not mini-swe-agent's at all is refused too, not guessed
    let p = temp_file("other.traj.json", r#"{"trajectory_format": "other-agent-9", "history": []}"#);
    assert!(detect_and_read(&p).unwrap_err().to_string().contains(r#"unknown value "other-agent-9""#));
    // an exit message anywhere but last
    let text = r#"{"trajectory_format": "mini-swe-agent-1.1", "messages": [{"role": "exit", "content": ""}, {"role": "user", "content": "x"}]}"#;
    let e = detect_and_read(&temp_file("exit_mid.traj.json", text)).unwrap_err().to_string();
    assert!(e.contains("messages[0].role") && e.contains("before the last message"), "{e}");
    // 1.x files know no exit role
    let text = r#"{"trajectory_format": "mini-swe-agent-1", "messages": [{"role": "exit", "content": ""}]}"#;
    assert!(detect_and_read(&temp_file("exit_v1.traj.json", text)).is_err());
}

#[test]
fn format_detection_names_every_format_tried() {
    // one line of an OpenHands output.jsonl: an event stream, not a chat
    let line = r#"{"instance_id": "demo__x-3", "history": [{"id": 0, "source": "agent", "action": "system", "message": "You are OpenHands agent"}, {"id": 1, "source": "user", "action": "message", "message": "fix it"}], "test_result": {}}"#;
    let e = detect_and_read(&temp_file("output.jsonl", line)).unwrap_err().to_string();
    assert!(!e.contains("history[0].role: missing"), "{e}");
    for tried in [
        "mini-swe-agent (no `trajectory_format`",
        "SWE-agent .traj (`history[0]` has no `role` but `action`, `source`",
        "OpenHands event stream",
        "LLaMA-Factory (no `messages`)",
        "LLaMA-Factory sharegpt (no `conversations`)",
        "nebius (no `trajectory`)",
        "openhands (no `tools`, `tool_calls` or non-native calls",
        "swe-smith (no `traj_id`",
    ] {
        assert!(e.contains(tried), "{tried} in {e}");
    }
    // two lines: read as JSON lines, the same account from line 1
    let e = detect_and_read(&temp_file("output2.jsonl", &format!("{line}\n{line}\n"))).unwrap_err().to_string();
    assert!(e.contains("JSON lines") && e.contains("OpenHands event stream"), "{e}");
    // a SWE-agent history still reads
    let ok = r#"{"history": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}"#;
    assert_eq!(detect_and_read(&temp_file("x.traj", ok)).unwrap()[0].messages.len(), 2);
}
