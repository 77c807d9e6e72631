-- 0011 tool commands: tools that multiplex several actions behind one name (an editor
-- tool whose `command` argument says view / create / str_replace / insert / undo_edit)
-- are bucketed by that argument, not by name (issue 9: OpenHands' str_replace_editor
-- with command "view" is a read, as the write heuristic already says). Data, not code:
-- a (tool, command) pair listed here overrides tool_aliases for that call.
create table tool_command_aliases (
    tool      varchar not null,        -- the tool name as the harness calls it
    command   varchar not null,        -- the value of its `command` argument
    canonical varchar not null,        -- bash, read, edit, search, submit
    primary key (tool, command)
);
insert into tool_command_aliases values
    ('str_replace_editor', 'view', 'read'),
    ('str_replace_based_edit_tool', 'view', 'read');
