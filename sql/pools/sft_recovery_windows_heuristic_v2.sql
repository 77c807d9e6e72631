-- sft_recovery_windows_heuristic_v2: HEURISTIC audit of each recovery window (SPEC §3.3,
-- issue 5 item 4): the failing test observation and the next passing one, the commands
-- that produced them, and whether the pass came from a changed command rather than a
-- code change (the seed's puremagic case). Rules: src/sft/heuristics.rs; the command of
-- an observation is the test command of the assistant message just before it.
-- Grain key: instance_id.
-- Grain: one row per trajectory with a window.
-- Columns: fail_index, pass_index (message indices of the observations); fail_command,
--   pass_command; same_command; env_changed (the VAR= assignments differ); runner_changed
--   (pytest / unittest / tox / runtests.py / manage.py test / bin/test differs);
--   narrower_selection (the pass selects by -k or a ::node id, the failure did not);
--   writes_between (a file write between the two observations); changed_command_pass
--   (flag: the command changed and no file was written in between — the pass did not come
--   from a code change).
-- Same rows as sft_recovery_windows_heuristic_v1, with RE2's \s and \S spelled out as the
-- classes RE2 gives them ([\t\n\f\r ] and its complement): Java's \s, which Spark's
-- regular expressions use, also holds the vertical tab. The patterns left use only what
-- RE2 and java.util.regex read alike, so it runs on Spark too (README "Beyond one machine").
with windows as (
    select instance_id, first_fail_index as fail_index, recovery_pass_index as pass_index
    from sft_test_runs_heuristic_v1
    where recovery_pass_index is not null
),
commands as (
    select instance_id, msg_index, string_agg(command, ' && ' order by call_index) as command
    from sft_commands
    where is_test
    group by instance_id, msg_index
),
joined as (
    select w.*, f.command as fail_command, p.command as pass_command,
           exists (select 1 from sft_messages as m
                   where m.instance_id = w.instance_id and m.writes
                     and m.msg_index > w.fail_index and m.msg_index < w.pass_index) as writes_between
    from windows as w
    left join commands as f on f.instance_id = w.instance_id and f.msg_index = w.fail_index - 1
    left join commands as p on p.instance_id = w.instance_id and p.msg_index = w.pass_index - 1
),
judged as (
    select *,
           fail_command = pass_command as same_command,
           list_sort(regexp_extract_all(fail_command, '(?:^|[\t\n\f\r ])([A-Z_][A-Z0-9_]*)=[^\t\n\f\r ]*', 1))
               <> list_sort(regexp_extract_all(pass_command, '(?:^|[\t\n\f\r ])([A-Z_][A-Z0-9_]*)=[^\t\n\f\r ]*', 1)) as env_changed,
           regexp_extract(fail_command, '(py\.?test|unittest|tox|runtests\.py|manage\.py test|bin/test)')
               <> regexp_extract(pass_command, '(py\.?test|unittest|tox|runtests\.py|manage\.py test|bin/test)') as runner_changed,
           regexp_matches(pass_command, '([\t\n\f\r ]-k[\t\n\f\r ]|::)') and not regexp_matches(fail_command, '([\t\n\f\r ]-k[\t\n\f\r ]|::)') as narrower_selection
    from joined
)
select
    instance_id, fail_index, pass_index, fail_command, pass_command, same_command,
    env_changed, runner_changed, narrower_selection, writes_between,
    coalesce(not same_command and not writes_between, false) as changed_command_pass
from judged
