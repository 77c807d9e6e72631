-- 0022 Inspect AI tool aliases (issue 27): Inspect's editor tool is `text_editor`
-- (inspect_ai.tool.text_editor), in the role of SWE-agent's and OpenHands'
-- str_replace_editor: its `command` argument says view / create / str_replace / insert /
-- undo_edit. By name it is an edit, as str_replace_editor is; with command "view" a read
-- (tool_command_aliases, 0011). Inspect's `bash` and `submit` are already listed (0004).
insert into tool_aliases values ('text_editor', 'edit');
insert into tool_command_aliases values ('text_editor', 'view', 'read');
