-- 0021 trajectory attempts (issue 27): published trajectory sets (SWE-smith, nebius
-- SWE-agent trajectories, SWE-Gym) hold several trajectories of one SWE-bench instance,
-- failed attempts included. Each is kept as its own trajectory, numbered by attempt:
-- * sft_trajectories.instance: the SWE-bench instance the trajectory works on;
-- * sft_trajectories.attempt: 0-based, in order of loading (file order within a file; a
--   later file's attempts of an instance continue after those already loaded);
-- * sft_trajectories.instance_id stays the key every table and view joins on, and now names
--   the trajectory: the instance itself for attempt 0 (so a corpus with one trajectory per
--   instance reads exactly as before), '<instance>#<attempt>' for attempts 1 and later
--   (sft_messages, sft_tool_calls, sft_commands and the views `views build` renders use it).
-- Rows loaded before 0021 are attempt 0 of their own instance.
alter table sft_trajectories add column instance varchar;
alter table sft_trajectories add column attempt integer;
update sft_trajectories set instance = instance_id, attempt = 0;
