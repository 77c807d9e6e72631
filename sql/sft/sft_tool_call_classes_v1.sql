-- sft_tool_call_classes_v1: the class of every stored tool call (SPEC §3.4 "supervised
-- tool calls by tool name; share that are bash"), written once for every figure that
-- buckets calls (sft_instances_v1, sft_supervised_tools_v1).
-- Grain key: instance_id, msg_index, call_index.
-- Grain: (instance_id, msg_index, call_index). Columns: name; command (the call's
--   `command` argument when it is a string, else null); tool (the class):
--   'bash'  when sphragis stored the call as a shell command (sft_commands: the call runs
--           in a shell, whatever its name: a SWE-agent text command such as `ls` or `rm`),
--           so bash calls and `report trajectories`' bash_commands count the same calls;
--   else the (tool, command) pair's class in tool_command_aliases (a multiplexed tool:
--           str_replace_editor with command "view" is a read);
--   else the name's class in tool_aliases; else 'other'.
select
    c.instance_id,
    c.msg_index,
    c.call_index,
    c.name,
    json_extract_string(c.arguments, '$.command') as command,
    case
        when exists (select 1 from sft_commands as k
                     where k.instance_id = c.instance_id and k.msg_index = c.msg_index and k.call_index = c.call_index)
            then 'bash'
        else coalesce(ca.canonical, a.canonical, 'other')
    end as tool
from sft_tool_calls as c
left join tool_command_aliases as ca
    on ca.tool = c.name and ca.command = json_extract_string(c.arguments, '$.command')
left join tool_aliases as a on a.tool = c.name
