-- ingest_files_v1: every input file bound to the database (SPEC §1 principle 4).
-- Grain key: file_id.
-- Grain: one row per loaded file.
-- Columns: file_id; kind (loader); path (absolute at load time); bytes; sha256 (hex);
--   rows (records written); loader_version; loaded_at (UTC timestamp).
select file_id, kind, path, bytes, sha256, rows, loader_version, loaded_at
from ingest_log
